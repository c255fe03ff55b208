package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.Fencing;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's provider contract as its documentation states it, against real Redis and PostgreSQL: a
 * lock is taken once, cannot be taken again until unlocked, stays for {@code lockAtLeastFor} after
 * unlock, and ends after {@code lockAtMostFor} if never unlocked.
 */
class FencedLockProviderContractTest {

  private static ShedLockFixture fx;
  private static FencedLockProvider instanceA;
  private static FencedLockProvider instanceB;

  @BeforeAll
  static void setUp() {
    fx = new ShedLockFixture();
    instanceA = new FencedLockProvider(fx.fencedLeases(), FencedLockOptions.defaults());
    instanceB = new FencedLockProvider(fx.fencedLeases(), FencedLockOptions.defaults());
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
    return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
  }

  /** Polls until {@code provider} gets the lock; returns how long that took. */
  static Duration awaitLock(FencedLockProvider provider, LockConfiguration config)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      Optional<SimpleLock> lock = provider.lock(config);
      if (lock.isPresent()) {
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        lock.get().unlock();
        return took;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("the lock never became free within 10 s");
  }

  @Test
  void shouldLockOnceAndRefuseASecondLockUntilUnlocked() {
    LockConfiguration config = config("contract-once", Duration.ofSeconds(30), Duration.ZERO);
    SimpleLock lock = instanceA.lock(config).orElseThrow();
    assertThat(instanceB.lock(config)).isEmpty();
    assertThat(instanceA.lock(config)).as("not reentrant across calls").isEmpty();
    lock.unlock();

    SimpleLock again = instanceB.lock(config).orElseThrow();
    again.unlock();
  }

  @Test
  void shouldLockDifferentNamesIndependently() {
    SimpleLock first =
        instanceA.lock(config("contract-x", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    SimpleLock second =
        instanceB.lock(config("contract-y", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    second.unlock();
    first.unlock();
  }

  @Test
  void shouldKeepTheLockForLockAtLeastForAfterAnEarlyUnlock() throws Exception {
    Duration atLeast = Duration.ofMillis(800);
    LockConfiguration config = config("contract-at-least", Duration.ofSeconds(30), atLeast);
    long locked = System.nanoTime();
    instanceA.lock(config).orElseThrow().unlock();

    assertThat(instanceB.lock(config)).as("still locked right after unlock").isEmpty();
    awaitLock(instanceB, config("contract-at-least", Duration.ofSeconds(30), Duration.ZERO));
    assertThat(Duration.ofNanos(System.nanoTime() - locked))
        .isGreaterThanOrEqualTo(atLeast.minusMillis(50));
  }

  @Test
  void shouldReleaseAtOnceWhenLockAtLeastForHasPassed() throws Exception {
    LockConfiguration config =
        config("contract-at-least-passed", Duration.ofSeconds(30), Duration.ofMillis(50));
    SimpleLock lock = instanceA.lock(config).orElseThrow();
    awaitTime(config.getLockAtLeastUntil().plusMillis(20));
    lock.unlock();
    instanceB.lock(config).orElseThrow().unlock();
  }

  @Test
  void shouldEndTheLockAfterLockAtMostForWhenNeverUnlocked() throws Exception {
    Duration atMost = Duration.ofMillis(500);
    long locked = System.nanoTime();
    SimpleLock forgotten =
        instanceA.lock(config("contract-at-most", atMost, Duration.ZERO)).orElseThrow();
    Lease lease = Fencing.currentLease().orElseThrow();
    try {
      assertThat(instanceB.lock(config("contract-at-most", atMost, Duration.ZERO))).isEmpty();
      Duration took = awaitLock(instanceB, config("contract-at-most", atMost, Duration.ZERO));
      // the holder gives the lock up at nine tenths of lockAtMostFor (its safety margin)
      assertThat(Duration.ofNanos(System.nanoTime() - locked))
          .isGreaterThanOrEqualTo(atMost.multipliedBy(9).dividedBy(10));
      assertThat(took).isLessThan(Duration.ofSeconds(5));
      assertThat(lease.isHeld()).isFalse();
    } finally {
      forgotten.unlock(); // ends the scope; the lease is gone already
    }
  }

  @Test
  void withKeepAliveTheLockOutlivesLockAtMostForWhileTheTaskRuns() throws Exception {
    FencedLockProvider keepAlive =
        new FencedLockProvider(fx.fencedLeases(), FencedLockOptions.defaults().withKeepAlive());
    Duration atMost = Duration.ofMillis(300);
    SimpleLock lock = keepAlive.lock(config("contract-keep-alive", atMost, Duration.ZERO)).get();
    try {
      awaitTime(ClockProvider.now().plus(atMost.multipliedBy(4))); // the task runs long
      assertThat(instanceB.lock(config("contract-keep-alive", atMost, Duration.ZERO))).isEmpty();
      assertThat(Fencing.currentLease().orElseThrow().isHeld()).isTrue();
    } finally {
      lock.unlock();
    }
    instanceB.lock(config("contract-keep-alive", atMost, Duration.ZERO)).orElseThrow().unlock();
  }

  @Test
  void shouldRunTheTaskInTheFencingScopeOfTheLease() {
    DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(instanceA);
    AtomicReference<Lease> inside = new AtomicReference<>();
    assertThat(Fencing.currentLease()).isEmpty();
    executor.executeWithLock(
        (Runnable) () -> inside.set(Fencing.currentLease().orElseThrow()),
        config("contract-scope", Duration.ofSeconds(30), Duration.ZERO));

    assertThat(inside.get().resource()).isEqualTo("contract-scope");
    assertThat(inside.get().isHeld()).as("released at unlock").isFalse();
    assertThat(Fencing.currentLease()).as("scope ended at unlock").isEmpty();
  }

  @Test
  void shouldMapEveryNameShedLockAllowsToAResourceItCanLock() {
    String name = "Billing job #1 (über: nächtlich) \t✓";
    SimpleLock lock =
        instanceA.lock(config(name, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    try {
      assertThat(Fencing.currentLease().orElseThrow().resource())
          .isEqualTo(instanceA.resourceName(name))
          .matches("[A-Za-z0-9_.:/-]{1,200}");
      assertThat(instanceB.lock(config(name, Duration.ofSeconds(30), Duration.ZERO))).isEmpty();
    } finally {
      lock.unlock();
    }
    String longName = "x".repeat(5000);
    instanceA.lock(config(longName, Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
  }

  @Test
  void shouldRefuseALockAtMostForShorterThanTheShortestLease() {
    assertThatThrownBy(
            () -> instanceA.lock(config("contract-short", Duration.ofMillis(5), Duration.ZERO)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 10ms");
    assertThat(Fencing.currentLease()).isEmpty();
  }

  @Test
  void shouldRefuseUnlockOnAnotherThreadButStillReleaseTheLock() throws Exception {
    LockConfiguration config = config("contract-thread", Duration.ofSeconds(30), Duration.ZERO);
    SimpleLock lock = instanceA.lock(config).orElseThrow();
    Lease lease = Fencing.currentLease().orElseThrow();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread other =
        new Thread(
            () -> {
              try {
                lock.unlock();
              } catch (Throwable t) {
                failure.set(t);
              }
            });
    other.start();
    other.join();
    assertThat(failure.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("thread that entered it");
    assertThat(lease.isHeld()).isFalse();
    instanceB.lock(config).orElseThrow().unlock();
    lock.unlock(); // on the locking thread: ends the scope left open
    assertThat(Fencing.currentLease()).isEmpty();
  }

  private static void awaitTime(java.time.Instant until) throws InterruptedException {
    while (ClockProvider.now().isBefore(until)) {
      Thread.sleep(10);
    }
  }
}
