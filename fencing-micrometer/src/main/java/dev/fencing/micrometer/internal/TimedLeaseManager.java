package dev.fencing.micrometer.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LeaseUnavailableException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Optional;

/** Times every acquisition of a delegate manager, by outcome. */
public final class TimedLeaseManager implements LeaseManager {

  private final LeaseManager delegate;
  private final MeterRegistry registry;
  private final boolean tagResource;

  /**
   * Creates the manager.
   *
   * @param delegate the manager to time
   * @param registry where to publish
   * @param tagResource whether to tag by resource
   */
  public TimedLeaseManager(LeaseManager delegate, MeterRegistry registry, boolean tagResource) {
    this.delegate = delegate;
    this.registry = registry;
    this.tagResource = tagResource;
  }

  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    Timer.Sample sample = Timer.start(registry);
    String outcome = "failed";
    try {
      Lease lease = delegate.acquire(resource, request);
      outcome = "acquired";
      return lease;
    } catch (LeaseUnavailableException e) {
      outcome = "unavailable";
      throw e;
    } finally {
      sample.stop(timer(outcome, resource));
    }
  }

  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    Timer.Sample sample = Timer.start(registry);
    String outcome = "failed";
    try {
      Optional<Lease> lease = delegate.tryAcquire(resource, request);
      outcome = lease.isPresent() ? "acquired" : "unavailable";
      return lease;
    } catch (LeaseUnavailableException e) {
      outcome = "unavailable";
      throw e;
    } finally {
      sample.stop(timer(outcome, resource));
    }
  }

  private Timer timer(String outcome, String resource) {
    return Timer.builder("fencing.lease.acquisitions")
        .description("Lease acquisitions, waiting and fence registration included, by outcome")
        .tag("outcome", outcome)
        .tags(ResourceTags.of(tagResource, resource))
        .register(registry);
  }

  @Override
  public void advanceTokenFloor(String resource, FencingToken floor) {
    delegate.advanceTokenFloor(resource, floor);
  }

  @Override
  public LeaseOptions options() {
    return delegate.options();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
