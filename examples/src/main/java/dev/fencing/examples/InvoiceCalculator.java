package dev.fencing.examples;

/**
 * Computes what a customer owes for a period. Runs inside the write transaction, between the
 * "already invoiced?" check and the inserts, as real billing code does (plan lookup, proration,
 * tax). The replay uses {@link #withLatency} to give that step a realistic duration.
 */
@FunctionalInterface
public interface InvoiceCalculator {

  long amountCents(Customer customer, String period);

  /** The plan price, no proration. */
  static InvoiceCalculator planPrice() {
    return (customer, period) -> customer.amountCents();
  }

  /** The plan price, after a pause that stands for a call to a pricing or tax service. */
  static InvoiceCalculator withLatency(long micros) {
    if (micros <= 0) {
      return planPrice();
    }
    return (customer, period) -> {
      long until = System.nanoTime() + micros * 1_000L;
      try {
        long left;
        while ((left = until - System.nanoTime()) > 0) {
          Thread.sleep(left / 1_000_000L, (int) (left % 1_000_000L));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return customer.amountCents();
    };
  }
}
