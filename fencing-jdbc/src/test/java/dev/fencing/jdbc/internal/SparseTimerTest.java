package dev.fencing.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SparseTimerTest {

  private static long inMillis(long millis) {
    return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
  }

  @Test
  void anArmedDeadlineRunsItsActionOnceItIsDue() throws Exception {
    SparseTimer timer = new SparseTimer("test-timer");
    CountDownLatch ran = new CountDownLatch(1);
    long armedAt = System.nanoTime();
    timer.arm(inMillis(100), ran::countDown);

    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(System.nanoTime() - armedAt)
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
  }

  @Test
  void aDisarmedDeadlineNeverRuns() throws Exception {
    SparseTimer timer = new SparseTimer("test-timer");
    AtomicInteger runs = new AtomicInteger();
    timer.arm(inMillis(50), runs::incrementAndGet).disarm();
    CountDownLatch later = new CountDownLatch(1);
    timer.arm(inMillis(200), later::countDown);

    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(runs).hasValue(0);
  }

  @Test
  void aDeadlineEarlierThanThePlannedWakeUpStillRunsOnTime() throws Exception {
    SparseTimer timer = new SparseTimer("test-timer");
    timer.arm(inMillis(60_000), () -> {});
    awaitAsleep(timer);
    CountDownLatch ran = new CountDownLatch(1);
    timer.arm(inMillis(50), ran::countDown);

    assertThat(ran.await(5, TimeUnit.SECONDS)).as("ran long before the planned wake-up").isTrue();
  }

  @Test
  void aSlowActionDoesNotDelayTheNextDeadline() throws Exception {
    SparseTimer timer = new SparseTimer("test-timer");
    CountDownLatch release = new CountDownLatch(1);
    timer.arm(inMillis(10), () -> awaitQuietly(release));
    CountDownLatch next = new CountDownLatch(1);
    timer.arm(inMillis(50), next::countDown);

    assertThat(next.await(5, TimeUnit.SECONDS)).isTrue();
    release.countDown();
  }

  @Test
  void armingAndDisarmingLaterDeadlinesDoesNotWakeTheThread() throws Exception {
    SparseTimer timer = new SparseTimer("test-timer");
    SparseTimer.Deadline first = timer.arm(inMillis(30_000), () -> {});
    awaitAsleep(timer);
    long before = timer.wakeUps();

    for (int i = 0; i < 10_000; i++) {
      timer.arm(inMillis(30_000 + i), () -> {}).disarm();
    }
    first.disarm();
    for (int i = 0; i < 10_000; i++) {
      timer.arm(inMillis(40_000), () -> {}).disarm();
    }

    // a spurious wake-up is allowed by Object.wait, so allow a couple, not one per call
    assertThat(timer.wakeUps() - before).isLessThanOrEqualTo(2);
  }

  /** Waits until the timer's thread started and went to sleep for the first time. */
  private static void awaitAsleep(SparseTimer timer) throws InterruptedException {
    long deadline = inMillis(5_000);
    while (!timer.isSleeping() && System.nanoTime() - deadline < 0) {
      Thread.sleep(5);
    }
    assertThat(timer.isSleeping()).as("the timer's thread went to sleep").isTrue();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
