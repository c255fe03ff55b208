package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.testing.PrivateRedis;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Leases when their Redis freezes or dies: a private server per test, paused or killed. */
class RedisFailureTest {

  private static final LeaseRequest THIRTY_SECONDS =
      LeaseRequest.forLeaseTime(Duration.ofSeconds(30));

  private PrivateRedis redis;
  private RedissonClient redisson;

  @BeforeEach
  void start() {
    redis = PrivateRedis.start();
    redisson = redis.connect();
  }

  @AfterEach
  void stop() {
    if (redis != null) {
      redis.close();
    }
    if (redisson != null) {
      redisson.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void shouldReportLossToListenersBeforeTheLockExpiresOnTheServer() throws Exception {
    CountDownLatch renewed = new CountDownLatch(1);
    LeaseObserver observer =
        new LeaseObserver() {
          @Override
          public void onRenewed(Lease lease) {
            renewed.countDown();
          }
        };
    try (RedisLeaseManager leases =
        RedisLeaseManager.create(redisson, LeaseOptions.defaults(), observer)) {
      Lease lease = leases.acquire("job", LeaseRequest.forLeaseTime(Duration.ofMillis(900)));
      AtomicLong lostAtMillis = new AtomicLong();
      AtomicReference<LossReason> reason = new AtomicReference<>();
      CountDownLatch lost = new CountDownLatch(1);
      lease.onLoss(
          (l, why) -> {
            lostAtMillis.set(System.currentTimeMillis());
            reason.set(why);
            lost.countDown();
          });
      assertThat(renewed.await(5, TimeUnit.SECONDS)).isTrue();
      long serverExpiryMillis =
          Long.parseLong(redis.cli("pexpiretime", "fencing:{job}:lock").trim());

      redis.pause();

      assertThat(lost.await(5, TimeUnit.SECONDS)).as("loss reported").isTrue();
      assertThat(reason.get()).isEqualTo(LossReason.RENEWAL_TIMEOUT);
      assertThat(lease.isHeld()).isFalse();
      assertThat(lostAtMillis.get())
          .as("reported before the server-side expiry at %d", serverExpiryMillis)
          .isLessThan(serverExpiryMillis);
      redis.resume();
    }
  }

  @Test
  void shouldFailWithinTheOperationTimeoutWhenRedisIsFrozen() {
    try (RedisLeaseManager leases =
        RedisLeaseManager.create(
            redisson, LeaseOptions.defaults().withOperationTimeout(Duration.ofMillis(700)))) {
      redis.pause();
      long start = System.nanoTime();
      assertThatThrownBy(
              () ->
                  leases.acquire(
                      "job",
                      LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
                          .withMaxWait(Duration.ofSeconds(30))))
          .isInstanceOf(LeaseBackendException.class)
          .hasMessageContaining("job");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
      redis.resume();
    }
  }

  @Test
  void shouldFailClearlyWhenRedisIsDown() {
    try (RedisLeaseManager leases =
        RedisLeaseManager.create(
            redisson, LeaseOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)))) {
      redis.kill();
      long start = System.nanoTime();
      assertThatThrownBy(
              () -> leases.tryAcquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(30))))
          .isInstanceOf(LeaseBackendException.class)
          .isInstanceOf(FencingException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
  }

  @Test
  void shouldIssueTokensAgainFromOneAfterAnEmptyRestart() {
    // The hazard fencing-jdbc guards against: Redis without persistence forgets its counter.
    try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults())) {
      long before;
      try (Lease lease = leases.acquire("job", THIRTY_SECONDS)) {
        before = lease.token().value();
      }
      try (Lease lease = leases.acquire("job", THIRTY_SECONDS)) {
        before = lease.token().value();
      }
      redis.restartEmpty();
      try (Lease lease = leases.acquire("job", THIRTY_SECONDS.withMaxWait(Duration.ofSeconds(5)))) {
        assertThat(before).isEqualTo(2);
        assertThat(lease.token().value()).isEqualTo(1);
      }
    }
  }
}
