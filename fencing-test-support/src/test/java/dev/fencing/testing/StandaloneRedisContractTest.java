package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The lease contract on the shared single Redis server, two clients as two instances. */
class StandaloneRedisContractTest extends LeaseManagerContract {

  private static RedissonClient first;
  private static RedissonClient second;
  private int created;

  @BeforeAll
  static void connect() {
    first = RedisServers.connectShared();
    second = RedisServers.connectShared();
  }

  @AfterAll
  static void disconnect() {
    if (first != null) {
      first.shutdown();
    }
    if (second != null) {
      second.shutdown();
    }
  }

  @Override
  protected LeaseManager newManager(LeaseOptions options, LeaseObserver observer) {
    return RedisLeaseManager.create(created++ % 2 == 0 ? first : second, options, observer);
  }

  @Override
  protected void breakLock(String keyPrefix, String resource) {
    second.getBucket(keyPrefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  @Override
  protected int releaseSubscribers(String keyPrefix, String resource) {
    return (int)
        second
            .getTopic(keyPrefix + "{" + resource + "}:released", StringCodec.INSTANCE)
            .countSubscribers();
  }

  @Override
  protected void removeKeys(String keyPrefix) {
    second.getKeys().deleteByPattern(keyPrefix + "*");
  }
}
