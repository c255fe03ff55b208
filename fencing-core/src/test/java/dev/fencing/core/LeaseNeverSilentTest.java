package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.testing.PrivateRedis;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Ways a lease was lost without telling its holder, or lived on without one (issue 11). */
class LeaseNeverSilentTest {

  private static final LeaseRequest FIVE_SECONDS = LeaseRequest.forLeaseTime(Duration.ofSeconds(5));

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
  void anErrorThrownByALossListenerDoesNotStopTheHeartbeatOfOtherLeases() throws Exception {
    try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults())) {
      LeaseRequest shortLease = LeaseRequest.forLeaseTime(Duration.ofMillis(900));
      Lease first = leases.acquire("first", shortLease);
      CountDownLatch lost = new CountDownLatch(1);
      first.onLoss(
          (lease, reason) -> {
            lost.countDown();
            throw new AssertionError("a listener that fails");
          });
      redis.pause();
      assertThat(lost.await(5, TimeUnit.SECONDS)).as("the first lease is reported lost").isTrue();
      redis.resume();

      Lease second = leases.acquire("second", shortLease.withMaxWait(Duration.ofSeconds(5)));
      AtomicInteger secondLosses = new AtomicInteger();
      second.onLoss((lease, reason) -> secondLosses.incrementAndGet());
      awaitMillis(3 * 900);

      assertThat(second.isHeld()).as("the second lease is still renewed").isTrue();
      assertThat(redis.cli("exists", "fencing:{second}:lock").trim()).isEqualTo("1");
      assertThat(secondLosses.get()).isZero();
      second.close();
    }
  }

  @Test
  void closingTheManagerReportsEveryHeldLeaseLostAndRefusesLaterAcquires() {
    RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
    Lease held = leases.acquire("job", FIVE_SECONDS);
    AtomicInteger losses = new AtomicInteger();
    held.onLoss((lease, reason) -> losses.incrementAndGet());

    leases.close();

    assertThat(held.isHeld()).isFalse();
    assertThat(held.lossReason()).as("the holder is told").isPresent();
    assertThat(held.lossReason()).hasValue(LossReason.MANAGER_CLOSED);
    awaitCount(losses, 1);
    assertThatThrownBy(() -> leases.acquire("other", FIVE_SECONDS))
        .isInstanceOf(LeaseManagerClosedException.class)
        .isInstanceOf(FencingException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> leases.tryAcquire("other", FIVE_SECONDS))
        .isInstanceOf(LeaseManagerClosedException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> leases.advanceTokenFloor("other", FencingToken.of(3)))
        .isInstanceOf(LeaseManagerClosedException.class);
    assertThat(losses.get()).as("exactly once").isEqualTo(1);
  }

  @Test
  void anAcquireThatTimedOutLeavesNoOrphanedLock() throws Exception {
    try (RedisLeaseManager leases =
        RedisLeaseManager.create(
            redisson, LeaseOptions.defaults().withOperationTimeout(Duration.ofMillis(300)))) {
      LeaseRequest request = LeaseRequest.forLeaseTime(Duration.ofSeconds(30));
      leases.acquire("warm-up", request).close(); // the scripts are loaded
      redis.cli("client", "pause", "1000", "all");
      assertThatThrownBy(() -> leases.tryAcquire("job", request))
          .isInstanceOf(LeaseBackendException.class);

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (redis.cli("exists", "fencing:{job}:lock").trim().equals("0")
          && System.nanoTime() < deadline) {
        Thread.sleep(20); // the paused script has not run yet
      }
      while (redis.cli("exists", "fencing:{job}:lock").trim().equals("1")
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(redis.cli("exists", "fencing:{job}:lock").trim())
          .as("the lock the abandoned script set is removed, not left for the 30 s lease time")
          .isEqualTo("0");
      try (Lease lease = leases.acquire("job", request)) {
        assertThat(lease.isHeld()).isTrue();
      }
    }
  }

  @Test
  void anInterruptDuringAcquireIsReportedAsTheDocumentedException() {
    try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults())) {
      Thread.currentThread().interrupt();
      try {
        assertThatThrownBy(
                () -> leases.acquire("job", FIVE_SECONDS.withMaxWait(Duration.ofSeconds(1))))
            .isInstanceOf(LeaseUnavailableException.class)
            .hasMessageContaining("interrupted");
        assertThat(Thread.currentThread().isInterrupted()).as("interrupt status kept").isTrue();
      } finally {
        Thread.interrupted();
      }
    }
  }

  @Test
  void aZeroSafetyMarginIsRejected() {
    assertThatThrownBy(() -> FIVE_SECONDS.withSafetyMargin(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("safetyMargin");
  }

  @Test
  void aHugeWaitIsAClearIllegalArgument() {
    assertThatThrownBy(() -> FIVE_SECONDS.withMaxWait(Duration.ofMillis(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait");
    assertThatThrownBy(() -> FIVE_SECONDS.withMaxWait(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait");
  }

  @Test
  void aHugeLeaseTimeIsAClearIllegalArgument() {
    assertThatThrownBy(() -> LeaseRequest.forLeaseTime(Duration.ofMillis(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime");
  }

  @Test
  void redisDownAtAcquireNamesTheServerAndWhy() {
    try (RedisLeaseManager leases =
        RedisLeaseManager.create(
            redisson, LeaseOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)))) {
      redis.kill();
      assertThatThrownBy(() -> leases.acquire("job", FIVE_SECONDS))
          .isInstanceOf(LeaseBackendException.class)
          .hasMessageContaining("127.0.0.1:" + redis.port())
          .hasMessageContaining("refused");
    }
  }

  private static void awaitCount(AtomicInteger count, int expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (count.get() < expected && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
  }

  private static void awaitMillis(long millis) throws InterruptedException {
    Thread.sleep(millis); // the time under test: leases must survive it
  }
}
