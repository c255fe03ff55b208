package dev.fencing.micrometer.internal;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.StaleTokenException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** Counts registrations, counter recoveries and rejected writes, from fence events. */
public final class FenceMeters implements FenceObserver {

  private final MeterRegistry registry;
  private final boolean tagResource;

  /**
   * Creates the meters.
   *
   * @param registry where to publish
   * @param tagResource whether to tag by resource
   */
  public FenceMeters(MeterRegistry registry, boolean tagResource) {
    this.registry = registry;
    this.tagResource = tagResource;
    if (!tagResource) {
      registrations("registered", null);
      recoveries(null);
      rejected(null);
    }
  }

  @Override
  public void onRegistered(Lease lease) {
    registrations("registered", lease.resource()).increment();
  }

  @Override
  public void onRegistrationFailed(Lease lease, Throwable failure) {
    registrations(failure instanceof StaleTokenException ? "stale" : "failed", lease.resource())
        .increment();
  }

  @Override
  public void onCounterRecovered(Lease lease, long fenceToken) {
    recoveries(lease.resource()).increment();
  }

  @Override
  public void onWriteRejected(StaleTokenException rejection) {
    rejected(rejection.resource()).increment();
  }

  private Counter registrations(String outcome, String resource) {
    return Counter.builder("fencing.fence.registrations")
        .description("Leases registered in the database fence, by outcome")
        .tag("outcome", outcome)
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }

  private Counter recoveries(String resource) {
    return Counter.builder("fencing.fence.counter.recoveries")
        .description("Redis token counters advanced past the token the fence remembers")
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }

  private Counter rejected(String resource) {
    return Counter.builder("fencing.writes.rejected")
        .description("Writes of stale lease holders rejected")
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }
}
