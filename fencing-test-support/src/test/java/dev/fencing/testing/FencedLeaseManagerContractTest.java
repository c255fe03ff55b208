package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FencedLeaseManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The lease contract on {@code FencedLeaseManager}: Redis leases registered in a real fence. */
class FencedLeaseManagerContractTest extends LeaseManagerContract {

  private static ProbeDatabase database;
  private static RedissonClient redisson;

  @BeforeAll
  static void setUp() {
    database = ProbeDatabase.postgres();
    redisson = RedisServers.connectShared();
  }

  @AfterAll
  static void tearDown() {
    if (redisson != null) {
      redisson.shutdown();
    }
    if (database != null) {
      database.close();
    }
  }

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    return new FencedLeaseManager(
        RedisLeaseManager.create(redisson, options, observer), database.db.fence());
  }

  @Override
  protected void breakLock(String keyPrefix, String resource) {
    redisson.getBucket(keyPrefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  @Override
  protected int releaseSubscribers(String keyPrefix, String resource) {
    return (int)
        redisson
            .getTopic(keyPrefix + "{" + resource + "}:released", StringCodec.INSTANCE)
            .countSubscribers();
  }

  @Override
  protected void removeKeys(String keyPrefix) {
    redisson.getKeys().deleteByPattern(keyPrefix + "*");
  }
}
