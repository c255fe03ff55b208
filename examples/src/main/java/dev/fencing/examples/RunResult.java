package dev.fencing.examples;

import java.time.Duration;

/**
 * What one billing run did, as the run itself saw it. The replay's double-charge numbers come from
 * {@link BillingStats} instead; only {@link #staleWritesRejected} and {@link #release} are taken
 * from here.
 *
 * @param runId the run
 * @param acquired false if the lock was held by someone else and the run did nothing
 * @param toBill active customers without an invoice when the run started
 * @param charged customers this run wrote an invoice and a charge for
 * @param skipped customers that already had an invoice when this run checked
 * @param staleWritesRejected writes the database rejected because this run's lock was stale
 * @param stoppedEarly why the run stopped before the end, or null
 * @param release what releasing the lock did (null if not acquired)
 * @param elapsed wall time from acquiring to releasing
 */
public record RunResult(
    String runId,
    boolean acquired,
    long toBill,
    long charged,
    long skipped,
    long staleWritesRejected,
    String stoppedEarly,
    LockStrategy.Release release,
    Duration elapsed) {

  static RunResult notAcquired(String runId) {
    return new RunResult(runId, false, 0, 0, 0, 0, "lock held by another run", null, Duration.ZERO);
  }

  public long processed() {
    return charged + skipped;
  }
}
