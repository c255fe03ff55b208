package dev.fencing.spring;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.testing.StaleViews;
import java.util.Optional;

/**
 * A user's own lease manager whose leases keep believing they are held, as a holder frozen right
 * after its local checks would: only the database can stop its writes.
 */
final class BelievedHeldLeaseManager implements LeaseManager {

  private final LeaseManager delegate;

  BelievedHeldLeaseManager(LeaseManager delegate) {
    this.delegate = delegate;
  }

  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    return StaleViews.believedHeld(delegate.acquire(resource, request));
  }

  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    return delegate.tryAcquire(resource, request).map(StaleViews::believedHeld);
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
