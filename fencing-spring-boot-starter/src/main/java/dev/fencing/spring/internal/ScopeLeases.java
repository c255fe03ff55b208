package dev.fencing.spring.internal;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;

/** The lease manager that {@code @Fenced} methods and the ShedLock provider acquire through. */
public final class ScopeLeases {

  private ScopeLeases() {}

  /**
   * Returns a manager whose leases are registered in the fence of {@code dataSource}, with timed
   * acquisitions when {@code timing} is given.
   *
   * @param manager the application's lease manager; used as it is when it already registers its
   *     leases ({@link FencedLeaseManager}), else wrapped (the wrapper is never closed, so the
   *     application's manager keeps its own lifecycle)
   * @param dataSource the fenced data source whose fence the leases are registered in
   * @param observer told of registrations when {@code manager} is wrapped
   * @param timing times the acquisitions, or {@code null}
   * @return the manager
   */
  public static LeaseManager of(
      LeaseManager manager,
      FencedDataSource dataSource,
      FenceObserver observer,
      LeaseTiming timing) {
    LeaseManager fenced =
        manager instanceof FencedLeaseManager
            ? manager
            : new FencedLeaseManager(manager, dataSource.fence(), observer);
    return timing == null ? fenced : timing.timed(fenced);
  }

  /**
   * Returns the manager as it is, for {@code fencing.lock-only}: its leases are not registered.
   *
   * @param manager the application's lease manager
   * @param timing times the acquisitions, or {@code null}
   * @return the manager
   */
  public static LeaseManager lockOnly(LeaseManager manager, LeaseTiming timing) {
    return timing == null ? manager : timing.timed(manager);
  }
}
