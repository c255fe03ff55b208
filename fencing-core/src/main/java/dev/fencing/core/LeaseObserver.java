package dev.fencing.core;

/**
 * Sees every state change of the leases of one {@link LeaseManager}, for metrics and logs. All
 * methods do nothing by default; implement the ones you need. Callbacks run on the caller's thread
 * (acquire, release) or on the manager's event thread (renewals, losses), never on the heartbeat
 * thread: they must be fast, must not block, and should not throw (anything thrown is logged and
 * ignored).
 */
public interface LeaseObserver {

  /** An observer that does nothing. */
  LeaseObserver NONE = new LeaseObserver() {};

  /**
   * A lease was acquired.
   *
   * @param lease the new lease
   */
  default void onAcquired(Lease lease) {}

  /**
   * A renewal extended the lease on the server.
   *
   * @param lease the renewed lease
   */
  default void onRenewed(Lease lease) {}

  /**
   * A renewal failed to reach the server or got an error; the lease is still held until its
   * deadline passes without a successful renewal.
   *
   * @param lease the lease
   * @param failure what went wrong
   */
  default void onRenewalFailed(Lease lease, Throwable failure) {}

  /**
   * A lease was lost.
   *
   * @param lease the lost lease
   * @param reason why
   */
  default void onLost(Lease lease, LossReason reason) {}

  /**
   * A lease was released by its holder.
   *
   * @param lease the released lease
   * @param deleted whether the lock key still held this lease's value and was deleted
   */
  default void onReleased(Lease lease, boolean deleted) {}

  /**
   * Releasing a lease failed (for example Redis was unreachable); the lock will expire on its own.
   *
   * @param lease the lease
   * @param failure what went wrong
   */
  default void onReleaseFailed(Lease lease, Throwable failure) {}
}
