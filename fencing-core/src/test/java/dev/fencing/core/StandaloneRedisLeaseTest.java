package dev.fencing.core;

import dev.fencing.core.testing.RedisServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The lease contract on the shared single Redis server. */
class StandaloneRedisLeaseTest extends LeaseManagerContract {

  private static RedissonClient first;
  private static RedissonClient second;

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
  protected RedissonClient firstClient() {
    return first;
  }

  @Override
  protected RedissonClient secondClient() {
    return second;
  }
}
