package dev.fencing.micrometer;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.micrometer.internal.FenceMeters;
import dev.fencing.micrometer.internal.LeaseMeters;
import dev.fencing.micrometer.internal.TimedLeaseManager;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Publishes what leases and the fence do as Micrometer meters, named in Micrometer's style:
 *
 * <ul>
 *   <li>{@value #ACQUISITIONS} (timer, tag {@code outcome}: {@code acquired}, {@code unavailable},
 *       {@code failed}): every acquisition through {@link #timed(LeaseManager)}, registration
 *       included when the manager is a {@code FencedLeaseManager};
 *   <li>{@value #LOST} (counter, tag {@code reason}: the {@code LossReason} in lower case);
 *   <li>{@value #ACTIVE} (gauge): leases held now;
 *   <li>{@value #REGISTRATIONS} (counter, tag {@code outcome}: {@code registered}, {@code stale},
 *       {@code failed});
 *   <li>{@value #RECOVERIES} (counter): Redis token counters advanced past the fence;
 *   <li>{@value #REJECTED} (counter, tag {@code where}: {@code database} when the database rejected
 *       the write, {@code jvm} when the JVM refused it because the lease was known lost): stale
 *       writes rejected.
 * </ul>
 *
 * <p>Without {@code tagResource}, every counter and the gauge exist from the start, at 0 (each
 * {@code reason} of {@value #LOST}, each {@code where} of {@value #REJECTED}).
 *
 * <p>With {@code tagResource}, every meter also carries the tag {@code resource}: one time series
 * per resource, so only for a bounded set of resource names.
 *
 * <pre>{@code
 * FencingMetrics metrics = new FencingMetrics(registry, false);
 * FencedDataSource db = FencedDataSource.wrap(pool, options, metrics.fenceObserver());
 * LeaseManager leases = metrics.timed(new FencedLeaseManager(
 *     RedisLeaseManager.create(redisson, LeaseOptions.defaults(), metrics.leaseObserver()),
 *     db.fence(), metrics.fenceObserver()));
 * }</pre>
 */
public final class FencingMetrics {

  /** Timer of lease acquisitions. */
  public static final String ACQUISITIONS = "fencing.lease.acquisitions";

  /** Counter of leases lost. */
  public static final String LOST = "fencing.lease.lost";

  /** Gauge of leases held. */
  public static final String ACTIVE = "fencing.lease.active";

  /** Counter of fence registrations. */
  public static final String REGISTRATIONS = "fencing.fence.registrations";

  /** Counter of Redis token counters recovered from the fence. */
  public static final String RECOVERIES = "fencing.fence.counter.recoveries";

  /** Counter of stale writes rejected. */
  public static final String REJECTED = "fencing.writes.rejected";

  private final MeterRegistry registry;
  private final boolean tagResource;
  private final LeaseMeters leaseMeters;
  private final FenceMeters fenceMeters;

  /**
   * Creates the meters in {@code registry}.
   *
   * @param registry where to publish
   * @param tagResource whether meters carry the resource name as a tag
   * @throws NullPointerException if {@code registry} is null
   */
  public FencingMetrics(MeterRegistry registry, boolean tagResource) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.tagResource = tagResource;
    this.leaseMeters = new LeaseMeters(registry, tagResource);
    this.fenceMeters = new FenceMeters(registry, tagResource);
  }

  /** {@return the observer to pass to {@code RedisLeaseManager.create}: losses, active leases} */
  public LeaseObserver leaseObserver() {
    return leaseMeters;
  }

  /**
   * {@return the observer to pass to {@code FencedLeaseManager} (registrations, recoveries) and to
   * {@code FencedDataSource.wrap} (rejected writes)}
   */
  public FenceObserver fenceObserver() {
    return fenceMeters;
  }

  /**
   * Counts a rejected write that was not reported to {@link #fenceObserver()}, by its type: {@code
   * StaleTokenException} as rejected by the database, {@code LeaseLostException} and {@code
   * LeaseLostSQLException} as refused in the JVM. Anything else is ignored. Call it once per
   * rejection, where the application (or an integration such as the Spring Boot starter) sees it.
   *
   * @param rejection the rejection
   * @throws NullPointerException if {@code rejection} is null
   */
  public void countRejected(Throwable rejection) {
    fenceMeters.onRefused(Objects.requireNonNull(rejection, "rejection"));
  }

  /**
   * Returns {@code leases} with every acquisition timed. The leases are the delegate's own.
   *
   * @param leases the manager to time
   * @return the timed manager; closing it closes {@code leases}
   * @throws NullPointerException if {@code leases} is null
   */
  public LeaseManager timed(LeaseManager leases) {
    return new TimedLeaseManager(Objects.requireNonNull(leases, "leases"), registry, tagResource);
  }
}
