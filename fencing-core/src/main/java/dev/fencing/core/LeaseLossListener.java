package dev.fencing.core;

/**
 * Called once when a lease is lost. Runs on its manager's event thread, never on the heartbeat
 * thread: keep it short anyway, since listeners of one manager run one after another. A listener
 * that throws (any {@link Throwable}) is logged and affects nothing else.
 */
@FunctionalInterface
public interface LeaseLossListener {

  /**
   * The lease is lost; {@link Lease#isHeld()} already returns false.
   *
   * @param lease the lost lease
   * @param reason why it was lost
   */
  void onLost(Lease lease, LossReason reason);
}
