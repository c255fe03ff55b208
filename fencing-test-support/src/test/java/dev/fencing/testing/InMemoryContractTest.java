package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;

/**
 * The published lease contract on {@link InMemoryLeaseManager}: every manager of a test is another
 * instance on the same in-memory server.
 */
class InMemoryContractTest extends LeaseManagerContract {

  private InMemoryLeaseManager server;

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    if (server == null) {
      server = InMemoryLeaseManager.create(options, observer, SettableClock.create());
      return server;
    }
    return server.anotherInstance(options, observer);
  }

  @Override
  protected void breakLock(String keyPrefix, String resource) {
    server.expireNow(resource);
  }

  @Override
  protected int releaseSubscribers(String keyPrefix, String resource) {
    return server.waiters(resource);
  }
}
