package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.jdbc.FencedLeaseManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The lease contract on {@code FencedLeaseManager} over {@link InMemoryLeaseManager}: in-memory
 * leases registered in a real fence, as the stale-writer probe uses them.
 */
class FencedInMemoryContractTest extends LeaseManagerContract {

  private static ProbeDatabase database;
  private InMemoryLeaseManager server;

  @BeforeAll
  static void setUp() {
    database = ProbeDatabase.postgres();
  }

  @AfterAll
  static void tearDown() {
    if (database != null) {
      database.close();
    }
  }

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    InMemoryLeaseManager manager;
    if (server == null) {
      server = InMemoryLeaseManager.create(options, observer, SettableClock.create());
      manager = server;
    } else {
      manager = server.anotherInstance(options, observer);
    }
    return new FencedLeaseManager(manager, database.db.fence());
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
