package dev.fencing.micrometer.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LossReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts losses and keeps the gauge of active leases, from lease events. */
public final class LeaseMeters implements LeaseObserver {

  private final MeterRegistry registry;
  private final boolean tagResource;
  private final Map<String, String> activeLeases = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> activeByResource = new ConcurrentHashMap<>();

  /**
   * Creates the meters.
   *
   * @param registry where to publish
   * @param tagResource whether to tag by resource
   */
  public LeaseMeters(MeterRegistry registry, boolean tagResource) {
    this.registry = registry;
    this.tagResource = tagResource;
    if (!tagResource) {
      active(null);
      for (LossReason reason : LossReason.values()) {
        lost(reason, null);
      }
    }
  }

  @Override
  public void onAcquired(Lease lease) {
    if (activeLeases.putIfAbsent(lease.leaseId(), lease.resource()) == null) {
      active(lease.resource()).incrementAndGet();
    }
  }

  @Override
  public void onLost(Lease lease, LossReason reason) {
    lost(reason, lease.resource()).increment();
    ended(lease);
  }

  /**
   * A release that found the lock no longer holding the lease's value ({@code deleted} false) ends
   * a lease that had already expired on the server without being reported lost (its holder released
   * it before the heartbeat judged it lost): counted as lost, {@code expired}, once.
   */
  @Override
  public void onReleased(Lease lease, boolean deleted) {
    if (!deleted && lease.lossReason().isEmpty()) {
      lost(LossReason.EXPIRED, lease.resource()).increment();
    }
    ended(lease);
  }

  private Counter lost(LossReason reason, String resource) {
    return Counter.builder("fencing.lease.lost")
        .description("Leases lost before their holder released them")
        .tag("reason", reason.name().toLowerCase(Locale.ROOT))
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }

  @Override
  public void onReleaseFailed(Lease lease, Throwable failure) {
    ended(lease);
  }

  private void ended(Lease lease) {
    if (activeLeases.remove(lease.leaseId()) != null) {
      active(lease.resource()).decrementAndGet();
    }
  }

  private AtomicInteger active(String resource) {
    String key = tagResource ? resource : "";
    return activeByResource.computeIfAbsent(
        key,
        k -> {
          AtomicInteger count = new AtomicInteger();
          Gauge.builder("fencing.lease.active", count, AtomicInteger::get)
              .description("Leases held now")
              .tags(ResourceTags.of(tagResource, resource))
              .strongReference(true)
              .register(registry);
          return count;
        });
  }
}
