package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

class NaiveRedisLockStrategyTest {

  private static RedissonClient redisson;
  private static String prefix;

  @BeforeAll
  static void setUp() {
    TestServers.requireRedis();
    redisson = Servers.redisson(TestServers.REDIS);
    prefix = "fencing-examples-naive-test-" + TestServers.suffix() + ":";
  }

  @AfterAll
  static void tearDown() {
    if (redisson != null) {
      redisson.getKeys().deleteByPattern(prefix + "*");
      redisson.shutdown();
    }
  }

  @Test
  void excludesWhileHeldAndReleasesItsOwnLock() throws Exception {
    var lock = new NaiveRedisLockStrategy(redisson, prefix + "a", Duration.ofSeconds(10));
    var a = lock.tryAcquire("A").orElseThrow();
    assertThat(lock.tryAcquire("B")).isEmpty();
    assertThat(a.release()).isEqualTo(LockStrategy.Release.OWN_LOCK_RELEASED);
    assertThat(lock.tryAcquire("C")).isPresent();
  }

  @Test
  void anExpiredHolderDeletesTheSuccessorsLock() throws Exception {
    var lock = new NaiveRedisLockStrategy(redisson, prefix + "b", Duration.ofMillis(200));
    var a = lock.tryAcquire("A").orElseThrow();
    Thread.sleep(400);
    var b = lock.tryAcquire("B").orElseThrow();
    assertThat(a.release()).isEqualTo(LockStrategy.Release.DELETED_ANOTHER_RUNS_LOCK);
    assertThat(lock.deletedOthersLocks()).isEqualTo(1);
    assertThat(lock.tryAcquire("C")).as("B's lock is gone").isPresent();
    assertThat(b.release()).isEqualTo(LockStrategy.Release.DELETED_ANOTHER_RUNS_LOCK);
  }
}
