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
  RENEWAL_TIMEOUT
}
