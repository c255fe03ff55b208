package dev.fencing.examples;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A place where a test or the replay can stall a billing run, standing for a GC pause or a slow
 * query. {@link BillingJob} calls it before each customer's write, <em>after</em> it asked its lock
 * whether it may go on: exactly the gap a heartbeat cannot close.
 */
@FunctionalInterface
public interface StallPoint {

  /** Never stalls. */
  StallPoint NONE = (runId, done, next) -> {};

  /**
   * Called before writing {@code next}.
   *
   * @param done customers this run has processed so far (charged or skipped)
   */
  void beforeWrite(String runId, long done, Customer next) throws InterruptedException;

  /**
   * Stalls once, before the customer after {@code afterDone} processed ones: counts down {@code
   * stalled}, then waits for {@code resume} (at most {@code max}).
   */
  static StallPoint pauseOnce(
      long afterDone, CountDownLatch stalled, CountDownLatch resume, Duration max) {
    return (runId, done, next) -> {
      if (done == afterDone) {
        stalled.countDown();
        resume.await(max.toMillis(), TimeUnit.MILLISECONDS);
      }
    };
  }

  /** Never stalls; counts down {@code reached} once {@code done} reaches {@code count}. */
  static StallPoint signalAt(long count, CountDownLatch reached) {
    return (runId, done, next) -> {
      if (done >= count) {
        reached.countDown();
      }
    };
  }
}
