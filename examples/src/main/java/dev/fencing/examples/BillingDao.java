package dev.fencing.examples;

import dev.fencing.jdbc.FenceOptions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * The billing job's data access, as an application team would write it. Every method takes the
 * {@link Connection} to work on, so the caller decides where connections come from (a plain pool
 * today, a fencing {@code DataSource} wrapper later) without the DAO changing.
 */
public interface BillingDao {

  /** What {@link #billCustomer} did. */
  enum Outcome {
    /** Wrote one invoice and one charge. */
    CHARGED,
    /** The customer already had an invoice for the period: nothing written. */
    ALREADY_INVOICED,
    /**
     * A retry of a charge that had committed (its reply was lost): the database refused the second
     * charge with the same idempotency key, nothing written.
     */
    ALREADY_CHARGED
  }

  /** Active customers that have no invoice for {@code period} yet. */
  long countActiveNotInvoiced(Connection c, String period) throws SQLException;

  /**
   * The next batch, in id order, of active customers with {@code id > afterId} and no invoice for
   * {@code period} yet (as far as this read can see).
   */
  List<Customer> loadActiveNotInvoiced(Connection c, String period, long afterId, int limit)
      throws SQLException;

  /**
   * Bills one customer in one transaction on {@code c}: checks that no invoice exists for the
   * period, computes the amount, inserts the invoice and its charge, commits. The charge carries
   * its idempotency key (run, customer, period): a retry of a charge whose first attempt committed
   * is refused by the key's unique index and reported as {@link Outcome#ALREADY_CHARGED}. On any
   * other failure the transaction is rolled back and the exception rethrown. Leaves {@code c} in
   * auto-commit mode.
   */
  Outcome billCustomer(
      Connection c, Customer customer, String period, String runId, InvoiceCalculator calculator)
      throws SQLException;

  /**
   * The same data access, with its two inserts written through fencing-jdbc's guarded statements
   * ({@code GuardedStatements}, jOOQ {@code FencedDsl}): the database checks the fence in the
   * statement itself, no trigger needed. For fenced writes where the enforcement trigger is not
   * used (MariaDB refuses it). Its {@link #billCustomer} needs a connection from a {@code
   * FencedDataSource} inside a {@code Fencing} scope; the reads are the same as this DAO's.
   *
   * @param fence where the fence lives (the {@code FencedDataSource}'s options)
   */
  BillingDao guarded(FenceOptions fence);
}
