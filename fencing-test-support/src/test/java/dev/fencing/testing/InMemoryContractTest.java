package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.internal.InMemoryLeaseStore;
import dev.fencing.core.internal.LeaseLifecycle;
import dev.fencing.core.internal.Ticker;

/** The lease contract on the in-memory store: the lifecycle alone, without Redis. */
class InMemoryContractTest extends LeaseManagerContract {

  private final InMemoryLeaseStore store = new InMemoryLeaseStore(Ticker.SYSTEM);

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    return LeaseLifecycle.start(store, options, observer);
  }

  @Override
  protected void breakLock(String keyPrefix, String resource) {
    store.breakLock(resource);
  }

  @Override
  protected int releaseSubscribers(String keyPrefix, String resource) {
    return store.subscriptions(resource);
  }
}
