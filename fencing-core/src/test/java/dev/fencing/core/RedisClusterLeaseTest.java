package dev.fencing.core;

import dev.fencing.core.testing.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The same lease contract on a three-master Redis Cluster started by the test. */
class RedisClusterLeaseTest extends LeaseManagerContract {

  private static RedisCluster cluster;
  private static RedissonClient first;
  private static RedissonClient second;

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
  protected RedissonClient firstClient() {
    return first;
  }

  @Override
  protected RedissonClient secondClient() {
    return second;
  }
}
