package dev.fencing.spring.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.FenceObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registrations in the fence that this instance is making now: a lease counts from the moment
 * Redis granted it until the fence registered it (or the registration failed, or the lease ended).
 * For the {@code fencing} health indicator, which shows a registration stuck behind a session that
 * holds the fence row.
 */
public final class RegistrationWatch implements FenceObserver {

  /** One registration under way. */
  public record Pending(String resource, long token, Duration waiting) {}

  private record Started(String resource, long token, long nanos) {}

  private final Map<Lease, Started> pending = new ConcurrentHashMap<>();

  /** Creates the watch. */
  public RegistrationWatch() {}

  /**
   * Returns {@code manager} with each lease it grants counted as a registration under way, until
   * this watch is told of its registration.
   *
   * @param manager the lease manager the fenced lease manager registers the leases of
   * @return the watching manager; closing it closes {@code manager}
   */
  public LeaseManager watching(LeaseManager manager) {
    return new LeaseManager() {
      @Override
      public Lease acquire(String resource, LeaseRequest request) {
        return started(manager.acquire(resource, request));
      }

      @Override
      public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
        return manager.tryAcquire(resource, request).map(RegistrationWatch.this::started);
      }

      @Override
      public void advanceTokenFloor(String resource, FencingToken floor) {
        manager.advanceTokenFloor(resource, floor);
      }

      @Override
      public LeaseOptions options() {
        return manager.options();
      }

      @Override
      public void close() {
        manager.close();
      }
    };
  }

  private Lease started(Lease lease) {
    pending.put(lease, new Started(lease.resource(), lease.token().value(), System.nanoTime()));
    return lease;
  }

  @Override
  public void onRegistered(Lease lease) {
    pending.remove(lease);
  }

  @Override
  public void onRegistrationFailed(Lease lease, Throwable failure) {
    pending.remove(lease);
  }

  /**
   * Returns the registrations under way, longest waiting first; leases no longer held are
   * forgotten.
   *
   * @return the registrations
   */
  public List<Pending> pending() {
    long now = System.nanoTime();
    List<Pending> out = new ArrayList<>();
    pending.forEach(
        (lease, started) -> {
          if (!lease.isHeld()) {
            pending.remove(lease);
          } else {
            out.add(
                new Pending(
                    started.resource(), started.token(), Duration.ofNanos(now - started.nanos())));
          }
        });
    out.sort(Comparator.comparing(Pending::waiting).reversed());
    return out;
  }
}
