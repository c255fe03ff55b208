package dev.fencing.spring.internal;

import dev.fencing.core.LeaseManager;

/**
 * Wraps the lease manager that {@code @Fenced} and the ShedLock provider acquire through, so that
 * every acquisition is timed; a bean of the metrics auto-configuration, absent without Micrometer.
 */
@FunctionalInterface
public interface LeaseTiming {

  /**
   * Returns {@code leases} with its acquisitions timed.
   *
   * @param leases the manager
   * @return the timed manager, whose leases are those of {@code leases}
   */
  LeaseManager timed(LeaseManager leases);
}
