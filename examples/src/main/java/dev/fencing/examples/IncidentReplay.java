package dev.fencing.examples;

import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;

/**
 * Replays the incident with scaled-down times: the billing job under each {@link ReplayMode}, and
 * what the database says about it afterwards.
 *
 * <ul>
 *   <li>Mode 1 (no lock) is the rolling deploy: the new instance's run starts when the old one is
 *       half way through.
 *   <li>Mode 2 (naive lock): run A acquires and bills; at 80% it stalls (GC pause, slow query)
 *       while its lock expires; the scheduler's next trigger starts run B, which acquires; when B
 *       has processed its first customer, A resumes and both bill the remaining customers
 *       concurrently. Half way through, B is slowed down until A has finished and released; one
 *       more trigger (run C) fires right after that.
 *   <li>Modes 3 and 4 (lease; lease + fencing): run A checks its lease before the customer at 80%
 *       ("still held"), then the whole worker pauses, its heartbeat included (its lease manager is
 *       closed): the lease really expires in Redis. The next trigger starts run B, which acquires
 *       with a higher token (mode 4: and registers it in the fence). B starts on the customer A was
 *       about to bill; while B is pricing it (inside its transaction, before its inserts), A
 *       resumes and writes that same customer, the one write a heartbeat cannot prevent. Then A
 *       checks its lease again, sees it lost and stops; B goes on; run C fires and finds B's lease
 *       held.
 * </ul>
 *
 * <p>Every job takes its connections from one {@link FencedDataSource} over the pool; outside a
 * {@code Fencing} scope (modes 1-3, and every read) it hands out plain connections.
 */
public final class IncidentReplay {

  /**
   * @param customers customers to create (every tenth is inactive)
   * @param ttl the lock TTL (the incident had 30 s; the replay scales it down)
   * @param pricingMicros simulated latency of computing one invoice, inside the transaction
   * @param batchSize customers loaded per batch
   * @param period the billing period
   */
  public record Settings(
      int customers, Duration ttl, long pricingMicros, int batchSize, String period) {

    public static Settings defaults() {
      return new Settings(3000, Duration.ofSeconds(2), 1000, 200, "2026-01");
    }
  }

  /**
   * One line of the replay's table.
   *
   * @param stats from the database, after all runs of the mode ended: charges, customers charged
   *     twice, stale writes rejected by the database
   * @param locksDeletedByNonOwner releases that removed another run's lock (as each release saw it)
   * @param runs what each run reported
   * @param skipped why the mode did not run (the library refused its setup), or null
   */
  public record Row(
      ReplayMode mode,
      BillingStats stats,
      long locksDeletedByNonOwner,
      List<RunResult> runs,
      String skipped) {

    /** Whether the mode did not run ({@link #skipped} says why). */
    public boolean wasSkipped() {
      return skipped != null;
    }
  }

  private final DataSource pool;
  private final RedissonClient redisson;
  private final BillingSchema schema;
  private final BillingDao dao;
  private final String keyPrefix;
  private final Settings settings;
  private final Consumer<String> log;
  private final FencedDataSource fenced;
  private final FenceWrites fenceWrites;
  private final BillingDao fencedDao;

  /**
   * As {@link #IncidentReplay(DataSource, RedissonClient, BillingSchema, BillingDao, String,
   * Settings, FenceWrites, Consumer)} with the database's default {@link FenceWrites}.
   */
  public IncidentReplay(
      DataSource pool,
      RedissonClient redisson,
      BillingSchema schema,
      BillingDao dao,
      String keyPrefix,
      Settings settings,
      Consumer<String> log) {
    this(
        pool,
        redisson,
        schema,
        dao,
        keyPrefix,
        settings,
        FenceWrites.defaultFor(schema.database()),
        log);
  }

  /**
   * @param pool connection pool on the database holding {@code schema}
   * @param redisson client for the locks
   * @param schema the billing tables
   * @param dao the data access code the job uses
   * @param keyPrefix prefix of every Redis key the replay touches
   * @param settings sizes and times
   * @param fenceWrites how mode 4 fences the job's writes
   * @param log progress lines
   */
  public IncidentReplay(
      DataSource pool,
      RedissonClient redisson,
      BillingSchema schema,
      BillingDao dao,
      String keyPrefix,
      Settings settings,
      FenceWrites fenceWrites,
      Consumer<String> log) {
    this.pool = Objects.requireNonNull(pool);
    this.redisson = redisson;
    this.schema = Objects.requireNonNull(schema);
    this.dao = Objects.requireNonNull(dao);
    this.keyPrefix = Objects.requireNonNull(keyPrefix);
    this.settings = Objects.requireNonNull(settings);
    this.log = Objects.requireNonNull(log);
    this.fenceWrites = Objects.requireNonNull(fenceWrites);
    FenceOptions options = fenceWrites.options(schema.fenceSchema());
    this.fenced = FencedDataSource.wrap(pool, options);
    this.fencedDao = fenceWrites.dao(dao, options);
  }

  /** Creates the tables in the schema (which should be empty or absent) and the customers. */
  public void prepare() throws SQLException {
    schema.migrate();
    schema.seedCustomers(settings.customers());
  }

  /** The Redis key of the billing lock. */
  public String lockKey() {
    return keyPrefix + "{billing}:lock";
  }

  /** Runs one mode on fresh billing tables and reads the result from the database. */
  public Row run(ReplayMode mode) throws Exception {
    schema.resetBilling();
    if (redisson != null) {
      redisson.getKeys().deleteByPattern(keyPrefix + "*");
    }
    log.accept("--- mode " + mode.number() + ": " + mode.label() + " ---");
    if (mode == ReplayMode.FENCED) {
      log.accept("writes fenced by " + fenceWrites.description());
    }
    List<RunResult> runs;
    try {
      runs =
          switch (mode) {
            case NO_LOCK -> rollingDeploy();
            case NAIVE_LOCK -> lockOutlivedByJob(naiveLock());
            case TOKEN_HEARTBEAT -> pauseAfterLastCheck(lease(false));
            case FENCED -> pauseAfterLastCheck(lease(true));
          };
    } catch (Exception e) {
      SQLFeatureNotSupportedException refused = refusal(e);
      if (refused == null) {
        throw e;
      }
      String why =
          schema.database().label()
              + " refuses --fence "
              + fenceWrites.option()
              + " (use --fence "
              + FenceWrites.GUARDED.option()
              + ")";
      log.accept("mode " + mode.number() + " skipped: " + why + ": " + refused.getMessage());
      return new Row(
          mode, BillingStats.query(pool, schema.schema(), settings.period()), 0, List.of(), why);
    }
    BillingStats stats = BillingStats.query(pool, schema.schema(), settings.period());
    long deletedOthers =
        runs.stream()
            .filter(r -> r.release() == LockStrategy.Release.DELETED_ANOTHER_RUNS_LOCK)
            .count();
    return new Row(mode, stats, deletedOthers, runs, null);
  }

  /**
   * The library's refusal of an option the database does not offer (trigger mode on MariaDB, at the
   * first registration), anywhere in {@code e}'s causes; null if there is none.
   */
  private static SQLFeatureNotSupportedException refusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLFeatureNotSupportedException refused) {
        return refused;
      }
    }
    return null;
  }

  private LeaseLockStrategy lease(boolean fencing) {
    if (redisson == null) {
      throw new IllegalStateException("the lease needs Redis");
    }
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(keyPrefix);
    LeaseRequest request = LeaseRequest.forLeaseTime(settings.ttl());
    return fencing
        ? LeaseLockStrategy.fenced(redisson, options, request, LeaseLockStrategy.RESOURCE, fenced)
        : LeaseLockStrategy.tokenAndHeartbeat(
            redisson, options, request, LeaseLockStrategy.RESOURCE);
  }

  private NaiveRedisLockStrategy naiveLock() {
    if (redisson == null) {
      throw new IllegalStateException("the naive lock needs Redis");
    }
    return new NaiveRedisLockStrategy(redisson, lockKey(), settings.ttl());
  }

  private BillingJob job(LockStrategy strategy, StallPoint stall) {
    boolean fencedLease = strategy instanceof LeaseLockStrategy lease && lease.isFenced();
    return new BillingJob(fenced, fencedLease ? fencedDao : dao, strategy)
        .batchSize(settings.batchSize())
        .calculator(pricing())
        .stallPoint(stall)
        .staleWrites(
            new RejectedWrites(pool, schema.database(), schema.schema(), settings.period()))
        .log(log);
  }

  private InvoiceCalculator pricing() {
    return InvoiceCalculator.withLatency(settings.pricingMicros());
  }

  private long activeCustomers() throws SQLException {
    return BillingStats.query(pool, schema.schema(), settings.period()).activeCustomers();
  }

  /** Mode 1: the old instance is half way through when the new instance starts its own run. */
  private List<RunResult> rollingDeploy() throws Exception {
    LockStrategy none = new NoLockStrategy();
    CountDownLatch halfWay = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      Future<RunResult> old =
          threads.submit(
              () ->
                  job(none, StallPoint.signalAt(activeCustomers() / 2, halfWay))
                      .run("old-instance", settings.period()));
      awaitOrDone(halfWay, old);
      log.accept("rolling deploy: the new instance starts while the old one is still running");
      Future<RunResult> fresh =
          threads.submit(() -> job(none, StallPoint.NONE).run("new-instance", settings.period()));
      return List.of(get(old), get(fresh));
    } finally {
      shutdown(threads);
    }
  }

  /**
   * Modes 2-4: run A outlives its lock (a stall at 80%), the next trigger starts run B, both bill;
   * A releases; one more trigger fires.
   */
  List<RunResult> lockOutlivedByJob(LockStrategy strategy) throws Exception {
    Duration maxStall = settings.ttl().multipliedBy(5).plusSeconds(10);
    CountDownLatch aStalled = new CountDownLatch(1);
    CountDownLatch resumeA = new CountDownLatch(1);
    long active = activeCustomers();
    long stallAt = active * 4 / 5;
    // B pauses half way through what A left, until A has released: so A's release always
    // happens while B is still working, whoever of the two would have finished first.
    long bHalfWay = Math.max(1, (active - stallAt) / 2);
    CountDownLatch aReleased = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(3);
    try {
      Future<RunResult> a =
          threads.submit(
              () ->
                  job(strategy, StallPoint.pauseOnce(stallAt, aStalled, resumeA, maxStall))
                      .run("run-A", settings.period()));
      awaitOrDone(aStalled, a);
      log.accept("run-A stalls (GC pause) at customer " + stallAt + "; its lock's TTL runs on");
      long deadline = System.nanoTime() + maxStall.toNanos();
      Future<RunResult> b = null;
      int attempt = 0;
      while (System.nanoTime() < deadline && !a.isDone()) {
        attempt++;
        BillingJob jobB =
            job(strategy, successorStall(resumeA, bHalfWay, aReleased, maxStall))
                .log(attempt == 1 ? log : l -> {});
        Future<RunResult> tryB = threads.submit(() -> jobB.run("run-B", settings.period()));
        RunResult first = waitAcquiredOrDone(tryB);
        if (first == null || first.acquired()) {
          b = tryB;
          log.accept("trigger " + (attempt + 1) + ": run-B acquired the lock");
          break;
        }
        Thread.sleep(Math.max(20, settings.ttl().toMillis() / 20));
      }
      resumeA.countDown();
      RunResult resultA;
      try {
        resultA = get(a);
      } finally {
        aReleased.countDown();
      }
      List<RunResult> results = new ArrayList<>();
      results.add(resultA);
      log.accept("run-A released: " + resultA.release());
      RunResult resultC = job(strategy, StallPoint.NONE).run("run-C", settings.period());
      if (b != null) {
        results.add(get(b));
      }
      results.add(resultC);
      return results;
    } finally {
      resumeA.countDown();
      aReleased.countDown();
      shutdown(threads);
    }
  }

  /**
   * Modes 3-4: run A passes its lease check, then the whole worker pauses (heartbeat included)
   * until its lease has expired in Redis and run B has acquired; A resumes while B is inside its
   * first customer's transaction (the one A was about to write), writes it, and stops at its next
   * check. One more trigger (run C) fires once A has released.
   */
  List<RunResult> pauseAfterLastCheck(LeaseLockStrategy strategy) throws Exception {
    Duration maxStall = settings.ttl().multipliedBy(5).plusSeconds(10);
    // B waits for A inside its open transaction; a fenced connection's session is ended by
    // PostgreSQL after one lease time idle in a transaction, so B waits at most half of that.
    Duration bMaxWait = settings.ttl().dividedBy(2);
    CountDownLatch aStalled = new CountDownLatch(1);
    CountDownLatch resumeA = new CountDownLatch(1);
    CountDownLatch aDone = new CountDownLatch(1);
    long stallAt = activeCustomers() * 4 / 5;
    java.util.concurrent.atomic.AtomicLong pausedBefore =
        new java.util.concurrent.atomic.AtomicLong();
    StallPoint pauseWholeWorker =
        (runId, done, next) -> {
          if (done == stallAt) {
            pausedBefore.set(next.id());
            strategy.stopHeartbeat(runId);
            aStalled.countDown();
            resumeA.await(maxStall.toMillis(), TimeUnit.MILLISECONDS);
          }
        };
    ExecutorService threads = Executors.newFixedThreadPool(3);
    try {
      Future<RunResult> a =
          threads.submit(() -> job(strategy, pauseWholeWorker).run("run-A", settings.period()));
      awaitOrDone(aStalled, a);
      log.accept(
          "run-A checked its lease: held. Before it writes customer "
              + pausedBefore.get()
              + ", its whole worker pauses, heartbeat included; the lease expires in Redis");
      InvoiceCalculator pricing = pricing();
      java.util.concurrent.atomic.AtomicBoolean first =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      InvoiceCalculator bPricing =
          (customer, period) -> {
            if (first.getAndSet(false)) {
              log.accept(
                  "run-B is pricing customer "
                      + customer.id()
                      + " (not invoiced yet; its transaction is open): run-A resumes");
              resumeA.countDown();
              try {
                aDone.await(bMaxWait.toMillis(), TimeUnit.MILLISECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return pricing.amountCents(customer, period);
          };
      long deadline = System.nanoTime() + maxStall.toNanos();
      Future<RunResult> b = null;
      int attempt = 0;
      while (System.nanoTime() < deadline && !a.isDone()) {
        attempt++;
        // Every trigger that finds the lease held logs it; only the first says so.
        Consumer<String> bLog = attempt == 1 ? log : line -> quietWhenNotAcquired(line, log);
        BillingJob jobB = job(strategy, StallPoint.NONE).calculator(bPricing).log(bLog);
        Future<RunResult> tryB = threads.submit(() -> jobB.run("run-B", settings.period()));
        RunResult firstResult = waitAcquiredOrDone(tryB);
        if (firstResult == null || firstResult.acquired()) {
          b = tryB;
          break;
        }
        Thread.sleep(Math.max(20, settings.ttl().toMillis() / 20));
      }
      // B resumes A from inside its first transaction; if B never gets there, resume A anyway.
      while (b != null && !b.isDone() && !resumeA.await(50, TimeUnit.MILLISECONDS)) {
        // waiting for B to reach its first customer
      }
      resumeA.countDown();
      RunResult resultA;
      try {
        resultA = get(a);
      } finally {
        aDone.countDown();
      }
      log.accept("run-A released: " + resultA.release());
      List<RunResult> results = new ArrayList<>();
      results.add(resultA);
      RunResult resultC = job(strategy, StallPoint.NONE).run("run-C", settings.period());
      if (b != null) {
        results.add(get(b));
      }
      results.add(resultC);
      return results;
    } finally {
      resumeA.countDown();
      aDone.countDown();
      shutdown(threads);
    }
  }

  private static void quietWhenNotAcquired(String line, Consumer<String> log) {
    if (!line.endsWith(BillingJob.NOT_ACQUIRED)) {
      log.accept(line);
    }
  }

  /**
   * Run B: lets A resume once B has processed its first customer; pauses (a slow query) half way
   * through until A has released.
   */
  private static StallPoint successorStall(
      CountDownLatch resumeA, long halfWay, CountDownLatch aReleased, Duration max) {
    return (runId, done, next) -> {
      if (done >= 1) {
        resumeA.countDown();
      }
      if (done == halfWay) {
        aReleased.await(max.toMillis(), TimeUnit.MILLISECONDS);
      }
    };
  }

  /** Null once B is running (it acquired); B's result if it finished (e.g. not acquired). */
  private static RunResult waitAcquiredOrDone(Future<RunResult> b) throws Exception {
    // A run that does not acquire returns at once; one that acquires keeps running.
    try {
      return b.get(200, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException running) {
      return null;
    }
  }

  private static void awaitOrDone(CountDownLatch latch, Future<?> run) throws Exception {
    while (!latch.await(50, TimeUnit.MILLISECONDS)) {
      if (run.isDone()) {
        run.get();
        return;
      }
    }
  }

  private static RunResult get(Future<RunResult> f) throws Exception {
    try {
      return f.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
  }

  private static void shutdown(ExecutorService threads) throws InterruptedException {
    threads.shutdown();
    if (!threads.awaitTermination(30, TimeUnit.SECONDS)) {
      threads.shutdownNow();
    }
  }

  /** The table header. */
  public static String header() {
    return String.format(
        Locale.ROOT,
        "%-33s %9s %8s %14s %22s %27s",
        "mode",
        "customers",
        "charges",
        "charged twice",
        "stale writes rejected",
        "locks deleted by non-owner");
  }

  /** One row of the table. */
  public static String format(Row row) {
    if (row.wasSkipped()) {
      return String.format(
          Locale.ROOT,
          "%-33s skipped: %s",
          row.mode().number() + " " + row.mode().label(),
          row.skipped());
    }
    return String.format(
        Locale.ROOT,
        "%-33s %9d %8d %14d %22d %27d",
        row.mode().number() + " " + row.mode().label(),
        row.stats().activeCustomers(),
        row.stats().charges(),
        row.stats().customersChargedTwice(),
        row.stats().staleWritesRejected(),
        row.locksDeletedByNonOwner());
  }
}
