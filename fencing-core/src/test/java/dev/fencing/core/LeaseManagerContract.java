package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The behaviour every deployment of {@link RedisLeaseManager} must show: one Redis, or a Redis
 * Cluster. Subclasses supply two independent clients, as two application instances would have.
 */
abstract class LeaseManagerContract {

  /** The first instance's client. */
  protected abstract RedissonClient firstClient();

  /** A second, independent client to the same Redis deployment. */
  protected abstract RedissonClient secondClient();

  private final List<RedisLeaseManager> managers = new ArrayList<>();
  protected String prefix;

  @BeforeEach
  void newPrefix() {
    prefix = "test-" + UUID.randomUUID().toString().substring(0, 8) + ":";
  }

  @AfterEach
  void closeManagers() {
    managers.forEach(RedisLeaseManager::close);
    managers.clear();
  }

  protected RedisLeaseManager manager(RedissonClient client, Duration leaseTime) {
    RedisLeaseManager manager =
        RedisLeaseManager.create(client, LeaseOptions.ofLeaseTime(leaseTime).withKeyPrefix(prefix));
    managers.add(manager);
    return manager;
  }

  protected String lockKey(String resource) {
    return prefix + "{" + resource + "}:lock";
  }

  @Test
  void shouldIssueStrictlyIncreasingTokens() {
    LeaseManager leases = manager(firstClient(), Duration.ofSeconds(5));
    long previous = 0;
    for (int i = 0; i < 20; i++) {
      try (Lease lease = leases.acquire("job", Duration.ofSeconds(1))) {
        assertThat(lease.token().value()).isGreaterThan(previous);
        previous = lease.token().value();
      }
    }
  }

  @Test
  void shouldIssueIncreasingTokensInHoldOrderAcrossThreadsAndInstances() throws Exception {
    LeaseManager first = manager(firstClient(), Duration.ofSeconds(5));
    LeaseManager second = manager(secondClient(), Duration.ofSeconds(5));
    List<Long> tokensInHoldOrder = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        LeaseManager leases = t % 2 == 0 ? first : second;
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 15; i++) {
                    try (Lease lease = leases.acquire("shared", Duration.ofSeconds(20))) {
                      tokensInHoldOrder.add(lease.token().value());
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> future : futures) {
        future.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(tokensInHoldOrder).hasSize(120).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void shouldAllowAtMostOneHolderUnderContention() throws Exception {
    LeaseManager first = manager(firstClient(), Duration.ofMillis(500));
    LeaseManager second = manager(secondClient(), Duration.ofMillis(500));
    int overlaps = runContention(first, second, true);
    assertThat(overlaps).as("holders seen inside the section at once").isZero();
  }

  @Test
  void contentionCheckShouldDetectOverlapWhenTheLockIsBypassed() throws Exception {
    LeaseManager first = manager(firstClient(), Duration.ofMillis(500));
    LeaseManager second = manager(secondClient(), Duration.ofMillis(500));
    int overlaps = runContention(first, second, false);
    assertThat(overlaps).as("the check must be able to fail").isPositive();
  }

  private int runContention(LeaseManager first, LeaseManager second, boolean useLock)
      throws Exception {
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        LeaseManager leases = t % 2 == 0 ? first : second;
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 25; i++) {
                    Lease lease =
                        useLock ? leases.acquire("contended", Duration.ofSeconds(20)) : null;
                    try {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                      inside.decrementAndGet();
                    } finally {
                      if (lease != null) {
                        lease.close();
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> future : futures) {
        future.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return overlaps.get();
  }

  @Test
  void shouldKeepTheLeaseWhileTheJobOutlivesItsLeaseTime() throws Exception {
    LeaseManager first = manager(firstClient(), Duration.ofMillis(300));
    LeaseManager second = manager(secondClient(), Duration.ofMillis(300));
    try (Lease lease = first.acquire("billing-nightly", Duration.ZERO)) {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
      while (System.nanoTime() < end) {
        assertThat(lease.isHeld()).isTrue();
        assertThat(second.tryAcquire("billing-nightly")).isEmpty();
        Thread.sleep(50);
      }
      assertThat(lease.lossReason()).isEmpty();
    }
    assertThat(second.tryAcquire("billing-nightly")).isPresent();
  }

  @Test
  void shouldKeepManyLeasesOnDistinctResourcesRenewedTogether() throws Exception {
    LeaseManager leases = manager(firstClient(), Duration.ofMillis(300));
    List<Lease> held = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      held.add(leases.acquire("many-" + i, Duration.ZERO));
    }
    Thread.sleep(1200);
    for (Lease lease : held) {
      assertThat(lease.isHeld()).as(lease.resource()).isTrue();
      assertThat(bucket(lockKey(lease.resource())).isExists()).isTrue();
      lease.close();
    }
  }

  @Test
  void shouldNotDeleteTheSuccessorsLockWhenAnExpiredHolderReleases() throws Exception {
    RedisLeaseManager stalled = manager(firstClient(), Duration.ofMillis(200));
    LeaseManager successor = manager(secondClient(), Duration.ofSeconds(10));
    Lease expired = stalled.acquire("billing-nightly", Duration.ZERO);
    stalled.close(); // the heartbeat stops, as in a stalled process
    Lease current = successor.acquire("billing-nightly", Duration.ofSeconds(2));
    assertThat(current.token()).isGreaterThan(expired.token());

    expired.close();

    assertThat(bucket(lockKey("billing-nightly")).isExists()).isTrue();
    assertThat(successor.tryAcquire("billing-nightly")).isEmpty();
    assertThat(current.isHeld()).isTrue();
    current.close();
  }

  @Test
  void plainDelReleaseShouldDeleteTheSuccessorsLockInTheSameSetup() throws Exception {
    RedisLeaseManager stalled = manager(firstClient(), Duration.ofMillis(200));
    LeaseManager successor = manager(secondClient(), Duration.ofSeconds(10));
    stalled.acquire("billing-nightly", Duration.ZERO);
    stalled.close();
    successor.acquire("billing-nightly", Duration.ofSeconds(2));

    bucket(lockKey("billing-nightly")).delete(); // the incident's unconditional DEL

    assertThat(successor.tryAcquire("billing-nightly"))
        .as("a plain DEL let a second holder in")
        .isPresent();
  }

  @Test
  void shouldWakeAWaiterPromptlyWhenTheHolderReleases() throws Exception {
    LeaseManager first = manager(firstClient(), Duration.ofSeconds(30));
    LeaseManager second = manager(secondClient(), Duration.ofSeconds(30));
    Lease holder = first.acquire("report", Duration.ZERO);
    AtomicReference<Long> acquiredAt = new AtomicReference<>();
    CountDownLatch waiting = new CountDownLatch(1);
    Thread waiter =
        new Thread(
            () -> {
              waiting.countDown();
              try (Lease lease = second.acquire("report", Duration.ofSeconds(20))) {
                acquiredAt.set(System.nanoTime());
              }
            });
    waiter.start();
    waiting.await();
    Thread.sleep(300);
    long releasedAt = System.nanoTime();
    holder.close();
    waiter.join(20_000);
    assertThat(acquiredAt.get()).as("the waiter acquired").isNotNull();
    assertThat(Duration.ofNanos(acquiredAt.get() - releasedAt))
        .as("woken by the release, not by the 30s lease expiry")
        .isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void shouldGiveUpAtTheWaitBound() {
    LeaseManager first = manager(firstClient(), Duration.ofSeconds(30));
    LeaseManager second = manager(secondClient(), Duration.ofSeconds(30));
    try (Lease holder = first.acquire("report", Duration.ZERO)) {
      long start = System.nanoTime();
      assertThatThrownBy(() -> second.acquire("report", Duration.ofMillis(300)))
          .isInstanceOf(LeaseUnavailableException.class)
          .hasMessageContaining("report");
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThanOrEqualTo(Duration.ofMillis(300))
          .isLessThan(Duration.ofSeconds(10));
      assertThat(holder.isHeld()).isTrue();
    }
  }

  @Test
  void shouldAcquireAfterTheHoldersLeaseExpires() {
    RedisLeaseManager crashed = manager(firstClient(), Duration.ofMillis(300));
    LeaseManager second = manager(secondClient(), Duration.ofSeconds(5));
    Lease dead = crashed.acquire("report", Duration.ZERO);
    crashed.close();
    try (Lease lease = second.acquire("report", Duration.ofSeconds(5))) {
      assertThat(lease.token()).isGreaterThan(dead.token());
    }
  }

  @Test
  void shouldReportATakeOverToListenersExactlyOnce() throws Exception {
    LeaseManager leases = manager(firstClient(), Duration.ofMillis(300));
    Lease lease = leases.acquire("job", Duration.ZERO);
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<LossReason> reason = new AtomicReference<>();
    lease.onLoss(
        (lost, why) -> {
          calls.incrementAndGet();
          reason.set(why);
        });

    bucket(lockKey("job")).delete();

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    while (calls.get() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    Thread.sleep(300);
    assertThat(calls.get()).isEqualTo(1);
    assertThat(reason.get()).isEqualTo(LossReason.TAKEN_OVER);
    assertThat(lease.isHeld()).isFalse();
    assertThatThrownBy(lease::checkHeld)
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("TAKEN_OVER");
    AtomicInteger late = new AtomicInteger();
    lease.onLoss((lost, why) -> late.incrementAndGet());
    assertThat(late.get()).as("a listener added after the loss is called at once").isEqualTo(1);
    lease.close();
  }

  @Test
  void shouldBeClosableFromAnotherThreadAndTwice() throws Exception {
    LeaseManager leases = manager(firstClient(), Duration.ofSeconds(5));
    Lease lease = leases.acquire("job", Duration.ZERO);
    Thread closer = new Thread(lease::close);
    closer.start();
    closer.join();
    lease.close();
    assertThat(lease.isHeld()).isFalse();
    assertThat(lease.lossReason()).isEmpty();
    assertThatThrownBy(lease::checkHeld).hasMessageContaining("released");
    try (Lease next = leases.acquire("job", Duration.ZERO)) {
      assertThat(next.token()).isGreaterThan(lease.token());
    }
  }

  @Test
  void shouldAdvanceTheTokenFloorWithoutEverLoweringIt() {
    LeaseManager leases = manager(firstClient(), Duration.ofSeconds(5));
    leases.advanceTokenFloor("job", FencingToken.of(1000));
    try (Lease lease = leases.acquire("job", Duration.ZERO)) {
      assertThat(lease.token().value()).isEqualTo(1001);
    }
    leases.advanceTokenFloor("job", FencingToken.of(10));
    try (Lease lease = leases.acquire("job", Duration.ZERO)) {
      assertThat(lease.token().value()).isEqualTo(1002);
    }
  }

  @Test
  void shouldNotifyTheObserverOfEveryStateChange() throws Exception {
    List<String> events = Collections.synchronizedList(new ArrayList<>());
    LeaseObserver observer =
        new LeaseObserver() {
          @Override
          public void onAcquired(Lease lease) {
            events.add("acquired");
          }

          @Override
          public void onRenewed(Lease lease) {
            events.add("renewed");
          }

          @Override
          public void onReleased(Lease lease, boolean deleted) {
            events.add("released:" + deleted);
          }
        };
    RedisLeaseManager leases =
        RedisLeaseManager.create(
            firstClient(),
            LeaseOptions.ofLeaseTime(Duration.ofMillis(300)).withKeyPrefix(prefix),
            observer);
    managers.add(leases);
    try (Lease lease = leases.acquire("job", Duration.ZERO)) {
      Thread.sleep(400);
    }
    assertThat(events).startsWith("acquired", "renewed").endsWith("released:true");
  }

  private org.redisson.api.RBucket<String> bucket(String key) {
    return secondClient().getBucket(key, StringCodec.INSTANCE);
  }
}
