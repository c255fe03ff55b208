package dev.fencing.spring.orm;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.testing.StaleViews;
import java.util.Optional;

/**
 * The application's own lease manager on Redis. While {@link #believeHeld} is set, its leases keep
 * believing they are held after they were lost, as a holder frozen right after its local checks
 * would: only the database can stop their writes.
 */
public final class ControlledLeaseManager implements LeaseManager {

  private final LeaseManager delegate;
  private volatile boolean believeHeld;

  public ControlledLeaseManager(LeaseManager delegate) {
    this.delegate = delegate;
  }

  public void believeHeld(boolean believe) {
    this.believeHeld = believe;
  }

  private Lease view(Lease lease) {
    return believeHeld ? StaleViews.believedHeld(lease) : lease;
  }

  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    return view(delegate.acquire(resource, request));
  }

  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    return delegate.tryAcquire(resource, request).map(this::view);
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
