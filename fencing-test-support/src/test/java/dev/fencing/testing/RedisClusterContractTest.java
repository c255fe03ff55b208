package dev.fencing.testing;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The lease contract on a three-master Redis Cluster started by the test. */
class RedisClusterContractTest extends LeaseManagerContract {

  private static RedisCluster cluster;
  private static RedissonClient first;
  private static RedissonClient second;
  private int created;

  @BeforeAll
  static void startCluster() {
    cluster = RedisCluster.start();
    first = cluster.connect();
    second = cluster.connect();
  }

  @AfterAll
  static void stopCluster() {
    if (first != null) {
      first.shutdown();
    }
    if (second != null) {
      second.shutdown();
    }
    if (cluster != null) {
      cluster.close();
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
}
