package dev.fencing.core;

/** Why a lease stopped being held before its holder released it. */
public enum LossReason {
  /** A renewal found the lock key gone or holding another holder's value. */
  TAKEN_OVER,
  /**
   * No renewal succeeded for longer than the lease time minus the safety margin (Redis unreachable
   * or too slow), judged by the holder's monotonic clock; the lock may expire on the server at any
   * moment, so the holder stops considering itself the owner.
   */
  RENEWAL_TIMEOUT,
  /**
   * A {@linkplain LeaseRequest#withoutRenewal() non-renewing} lease reached its lease time minus
   * the safety margin without being released.
   */
  EXPIRED,
  /**
   * The lease's manager was closed while the lease was held. The lock was left to expire on the
   * server after at most one lease time, so the holder has that long to stop.
   */
  MANAGER_CLOSED,
  /**
   * The database fence names a newer holder: a write or registration carrying this lease's token
   * was rejected, so a successor exists even if Redis has not said so yet. Reported through {@link
   * Lease#markLost(LossReason)}, typically by fencing-jdbc.
   */
  SUPERSEDED
}
