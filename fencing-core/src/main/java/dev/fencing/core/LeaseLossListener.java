package dev.fencing.core;

/**
 * Called once when a lease is lost. Runs on fencing's heartbeat thread: keep it short and never
 * block in it (hand long work to another executor).
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
