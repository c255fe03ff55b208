package dev.fencing.micrometer.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.LeaseLostSQLException;
import dev.fencing.jdbc.StaleTokenException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts registrations, counter recoveries and rejected writes, from fence events (the database's
 * rejections) and from {@link #onRefused} (every other rejection, by its type).
 */
public final class FenceMeters implements FenceObserver {

  /** The tag {@code where} of a write the database rejected. */
  public static final String DATABASE = "database";

  /** The tag {@code where} of a write the JVM refused: the lease was known lost. */
  public static final String JVM = "jvm";

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
      rejected(DATABASE, null);
      rejected(JVM, null);
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
    rejected(DATABASE, rejection.resource()).increment();
  }

  /**
   * Counts a rejection by its type: {@link StaleTokenException} as rejected by the database, {@link
   * LeaseLostException} and {@link LeaseLostSQLException} as refused in the JVM; anything else is
   * not a rejection and is not counted.
   *
   * @param rejection the rejection
   */
  public void onRefused(Throwable rejection) {
    if (rejection instanceof StaleTokenException stale) {
      onWriteRejected(stale);
    } else if (rejection instanceof LeaseLostSQLException lost) {
      rejected(JVM, lost.resource()).increment();
    } else if (rejection instanceof LeaseLostException lost) {
      rejected(JVM, lost.resource()).increment();
    }
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

  private Counter rejected(String where, String resource) {
    return Counter.builder("fencing.writes.rejected")
        .description(
            "Writes of stale lease holders rejected, by the database or (the lease known lost)"
                + " in the JVM")
        .tag("where", where)
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }
}
