package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.PrivateRedis;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Counter recovery that fails half-way must not leave a lease renewed with no holder. */
class CounterRecoveryFailureTest {

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @Test
  void aLeaseWhoseCounterRecoveryFailedIsClosedNotRenewedForever() {
    try (PrivateRedis redis = PrivateRedis.start()) {
      RedissonClient first = redis.connect();
      RedissonClient second = redis.connect();
      AtomicBoolean pauseRedisOnAcquire = new AtomicBoolean();
      LeaseObserver pauser =
          new LeaseObserver() {
            @Override
            public void onAcquired(Lease lease) {
              if (pauseRedisOnAcquire.getAndSet(false)) {
                redis.cli("client", "pause", "1000", "all"); // slow right after losing its data
              }
            }
          };
      LeaseOptions options = LeaseOptions.defaults().withOperationTimeout(Duration.ofMillis(300));
      LeaseRequest threeSeconds = FencingFixture.lease(Duration.ofSeconds(3));
      try (RedisLeaseManager plain = RedisLeaseManager.create(first, options, pauser);
          RedisLeaseManager other = RedisLeaseManager.create(second, LeaseOptions.defaults())) {
        FencedLeaseManager fenced = new FencedLeaseManager(plain, fx.db.fence());
        fenced.acquire("recovery", threeSeconds).close();
        redis.cli("flushall"); // Redis lost its counter; the fence remembers token 1
        pauseRedisOnAcquire.set(true);

        assertThatThrownBy(() -> fenced.acquire("recovery", threeSeconds))
            .isInstanceOf(LeaseBackendException.class);

        redis.cli("ping"); // answered once the pause is over
        try (Lease next =
            other.acquire("recovery", threeSeconds.withMaxWait(Duration.ofSeconds(8)))) {
          assertThat(next.isHeld()).as("the abandoned lease was not renewed forever").isTrue();
        }
      } finally {
        first.shutdown(0, 2, TimeUnit.SECONDS);
        second.shutdown(0, 2, TimeUnit.SECONDS);
      }
    }
  }
}
