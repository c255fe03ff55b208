package dev.fencing.core.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** A Redis Cluster of three masters on loopback ports, started and torn down by a test. */
public final class RedisCluster implements AutoCloseable {

  private final List<PrivateRedis> nodes = new ArrayList<>();

  private RedisCluster() {}

  /** Starts three cluster-enabled servers and joins them into one cluster. */
  public static RedisCluster start() {
    RedisCluster cluster = new RedisCluster();
    try {
      for (int i = 0; i < 3; i++) {
        cluster.nodes.add(
            PrivateRedis.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"));
      }
      List<String> create = new ArrayList<>();
      create.add(RedisServers.redisCliBinary());
      create.add("--cluster");
      create.add("create");
      for (PrivateRedis node : cluster.nodes) {
        create.add("127.0.0.1:" + node.port());
      }
      create.add("--cluster-replicas");
      create.add("0");
      create.add("--cluster-yes");
      PrivateRedis.run(create);
      cluster.awaitReady();
      return cluster;
    } catch (RuntimeException | AssertionError e) {
      cluster.close();
      throw e;
    }
  }

  /** Returns a new cluster client; the caller closes it. */
  public RedissonClient connect() {
    Config config = new Config();
    var servers =
        config
            .useClusterServers()
            .setTimeout(1000)
            .setConnectTimeout(1000)
            .setRetryAttempts(1)
            .setMasterConnectionMinimumIdleSize(2)
            .setSubscriptionConnectionMinimumIdleSize(1);
    for (PrivateRedis node : nodes) {
      servers.addNodeAddress(node.address());
    }
    return Redisson.create(config);
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      boolean ok = true;
      for (PrivateRedis node : nodes) {
        ok &= node.cli("cluster", "info").contains("cluster_state:ok");
      }
      if (ok) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Redis Cluster did not reach cluster_state:ok within 30s");
      }
      PrivateRedis.sleep(100);
    }
  }

  @Override
  public void close() {
    for (PrivateRedis node : nodes) {
      node.close();
    }
    nodes.clear();
  }
}
