package dev.fencing.examples;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The nightly billing job: walks the active customers not yet invoiced for a period in batches and,
 * for each, writes an invoice and a charge in one transaction. What protects it from a concurrent
 * run is the {@link LockStrategy}; {@link StallPoint} lets a test pause it.
 *
 * <p>Not thread-safe to configure; {@link #run} may be called from several threads at once.
 */
public final class BillingJob {

  /** The end of the line logged when the lock is held by someone else. */
  static final String NOT_ACQUIRED = "lock is held by another run: not running";

  private final DataSource pool;
  private final BillingDao dao;
  private final LockStrategy lock;
  private int batchSize = 200;
  private StallPoint stallPoint = StallPoint.NONE;
  private InvoiceCalculator calculator = InvoiceCalculator.planPrice();
  private Consumer<String> log = line -> {};
  private Duration progressEvery = Duration.ofSeconds(1);
  private StaleWriteListener staleWrites = (runId, customer, e) -> {};

  /** Told about each write the lock strategy classifies as a stale-write rejection. */
  @FunctionalInterface
  public interface StaleWriteListener {
    /**
     * Called after the rejected transaction was rolled back, before the run stops.
     *
     * @param customer the customer whose write was rejected
     * @param e the rejection
     */
    void rejected(String runId, Customer customer, SQLException e) throws SQLException;
  }

  /**
   * @param pool where connections come from (a fencing strategy may wrap it for writes)
   * @param dao the data access code
   * @param lock what protects a run from a concurrent one
   */
  public BillingJob(DataSource pool, BillingDao dao, LockStrategy lock) {
    this.pool = Objects.requireNonNull(pool);
    this.dao = Objects.requireNonNull(dao);
    this.lock = Objects.requireNonNull(lock);
  }

  public BillingJob batchSize(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize < 1");
    }
    this.batchSize = batchSize;
    return this;
  }

  public BillingJob stallPoint(StallPoint stallPoint) {
    this.stallPoint = Objects.requireNonNull(stallPoint);
    return this;
  }

  public BillingJob calculator(InvoiceCalculator calculator) {
    this.calculator = Objects.requireNonNull(calculator);
    return this;
  }

  /** Where progress lines and the summary go (default: nowhere). */
  public BillingJob log(Consumer<String> log) {
    this.log = Objects.requireNonNull(log);
    return this;
  }

  /** Where rejected stale writes are reported (default: nowhere). */
  public BillingJob staleWrites(StaleWriteListener staleWrites) {
    this.staleWrites = Objects.requireNonNull(staleWrites);
    return this;
  }

  public BillingJob progressEvery(Duration progressEvery) {
    this.progressEvery = Objects.requireNonNull(progressEvery);
    return this;
  }

  /**
   * One billing run for {@code period}.
   *
   * @param runId identifies the run in logs and in the rows it writes
   * @throws Exception from the lock strategy, the database (other than a stale-write rejection,
   *     which stops the run and is counted) or an interrupt
   */
  public RunResult run(String runId, String period) throws Exception {
    Optional<LockStrategy.Hold> acquired = lock.tryAcquire(runId);
    if (acquired.isEmpty()) {
      log.accept(String.format("[%s] %s", runId, NOT_ACQUIRED));
      return RunResult.notAcquired(runId);
    }
    LockStrategy.Hold hold = acquired.get();
    long started = System.nanoTime();
    long toBill = 0;
    long charged = 0;
    long skipped = 0;
    long rejected = 0;
    String stopped = null;
    LockStrategy.Release release;
    try {
      DataSource writes = hold.dataSource(pool);
      try (Connection c = pool.getConnection()) {
        toBill = dao.countActiveNotInvoiced(c, period);
      }
      log.accept(
          String.format(
              "[%s] %s%s; %d customers to bill for %s",
              runId,
              lock instanceof NoLockStrategy ? "running without a lock" : lock.name() + " acquired",
              hold.token() > 0 ? " (token " + hold.token() + ")" : "",
              toBill,
              period));
      long lastProgress = started;
      long afterId = 0;
      outer:
      while (true) {
        List<Customer> batch;
        try (Connection c = pool.getConnection()) {
          batch = dao.loadActiveNotInvoiced(c, period, afterId, batchSize);
        }
        if (batch.isEmpty()) {
          break;
        }
        for (Customer customer : batch) {
          if (!hold.stillAllowed()) {
            stopped = "lost the lock";
            break outer;
          }
          stallPoint.beforeWrite(runId, charged + skipped, customer);
          BillingDao.Outcome outcome;
          try {
            outcome =
                hold.write(
                    () -> {
                      try (Connection c = writes.getConnection()) {
                        return dao.billCustomer(c, customer, period, runId, calculator);
                      }
                    });
          } catch (SQLException e) {
            if (hold.isStaleWriteRejection(e)) {
              rejected++;
              staleWrites.rejected(runId, customer, e);
              stopped = "the database rejected a stale write: " + e.getMessage();
              break outer;
            }
            throw e;
          }
          if (outcome == BillingDao.Outcome.CHARGED) {
            charged++;
          } else {
            skipped++;
          }
          afterId = customer.id();
          long now = System.nanoTime();
          if (now - lastProgress >= progressEvery.toNanos()) {
            lastProgress = now;
            log.accept(progressLine(runId, charged, skipped, toBill, now - started));
          }
        }
      }
    } finally {
      release = hold.release();
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
    RunResult result =
        new RunResult(runId, true, toBill, charged, skipped, rejected, stopped, release, elapsed);
    log.accept(summaryLine(result));
    return result;
  }

  private static String progressLine(
      String runId, long charged, long skipped, long toBill, long elapsedNanos) {
    long done = charged + skipped;
    return String.format(
        Locale.ROOT,
        "[%s] %d/%d customers (%d%%), %d charged, %d skipped, %.0f/s",
        runId,
        done,
        toBill,
        toBill == 0 ? 100 : done * 100 / toBill,
        charged,
        skipped,
        done / (elapsedNanos / 1e9));
  }

  static String summaryLine(RunResult r) {
    double seconds = r.elapsed().toNanos() / 1e9;
    return String.format(
        Locale.ROOT,
        "[%s] %s: %d customers in %.1f s (%.0f/s): %d charged, %d already invoiced"
            + "%s; release: %s",
        r.runId(),
        r.stoppedEarly() == null ? "finished" : "stopped (" + r.stoppedEarly() + ")",
        r.processed(),
        seconds,
        seconds > 0 ? r.processed() / seconds : 0.0,
        r.charged(),
        r.skipped(),
        r.staleWritesRejected() > 0
            ? ", " + r.staleWritesRejected() + " stale write(s) rejected"
            : "",
        r.release().name().toLowerCase(Locale.ROOT).replace('_', ' '));
  }
}
