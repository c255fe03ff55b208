package dev.fencing.shedlock;

import dev.fencing.shedlock.internal.LockNames;
import java.util.Objects;

/**
 * How {@link FencedLockProvider} maps ShedLock locks to leases, validated on construction.
 *
 * @param resourcePrefix put before every mapped lock name; empty by default, so the lock {@code
 *     billing-nightly} is the resource {@code billing-nightly} that other fenced code may also use.
 *     At most 100 characters from {@code A-Z a-z 0-9 _ . : / -}
 * @param keepAlive whether the lease renews itself while the task runs (ShedLock's {@code
 *     KeepAliveLockProvider}, which this replaces): {@code lockAtMostFor} then bounds how long the
 *     lock outlives a dead or cut-off instance, not how long the task may run. Off by default:
 *     {@code lockAtMostFor} is a hard bound, as with every other ShedLock provider
 */
public record FencedLockOptions(String resourcePrefix, boolean keepAlive) {

  /**
   * Validates the options.
   *
   * @param resourcePrefix see {@link #resourcePrefix()}
   * @param keepAlive see {@link #keepAlive()}
   * @throws NullPointerException if {@code resourcePrefix} is null
   * @throws IllegalArgumentException if {@code resourcePrefix} is too long or has other characters
   */
  public FencedLockOptions {
    Objects.requireNonNull(resourcePrefix, "resourcePrefix");
    LockNames.validatePrefix(resourcePrefix);
  }

  /** {@return the defaults: no prefix, no keep-alive} */
  public static FencedLockOptions defaults() {
    return new FencedLockOptions("", false);
  }

  /**
   * Returns a copy with another resource prefix.
   *
   * @param resourcePrefix the prefix
   * @return the new options
   * @throws IllegalArgumentException if the prefix is invalid
   */
  public FencedLockOptions withResourcePrefix(String resourcePrefix) {
    return new FencedLockOptions(resourcePrefix, keepAlive);
  }

  /**
   * Returns a copy whose leases renew themselves while the task runs.
   *
   * @return the new options
   */
  public FencedLockOptions withKeepAlive() {
    return new FencedLockOptions(resourcePrefix, true);
  }
}
