package dev.fencing.jdbc;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.testing.LeaseManagerContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.client.codec.StringCodec;

/** The lease contract on {@link FencedLeaseManager}: Redis leases registered in a real fence. */
class FencedLeaseManagerContractTest extends LeaseManagerContract {

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    return new FencedLeaseManager(
        RedisLeaseManager.create(fx.redisson, options, observer), fx.db.fence());
  }

  @Override
  protected void breakLock(String keyPrefix, String resource) {
    fx.redisson.getBucket(keyPrefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  @Override
  protected int releaseSubscribers(String keyPrefix, String resource) {
    return (int)
        fx.redisson
            .getTopic(keyPrefix + "{" + resource + "}:released", StringCodec.INSTANCE)
            .countSubscribers();
  }

  @Override
  protected void removeKeys(String keyPrefix) {
    fx.redisson.getKeys().deleteByPattern(keyPrefix + "*");
  }
}
