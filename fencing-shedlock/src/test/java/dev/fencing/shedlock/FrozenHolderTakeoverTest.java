package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * ShedLock's default (no keep-alive): the lease is not renewed, {@code lockAtMostFor} is its lease
 * time. Instance A writes one charge inside a transaction and then freezes before committing (a
 * stopped process, a GC pause, a silent network): its session sits {@code idle in transaction} and
 * holds the fence row's share lock. Instance B polls for the lock as ShedLock's scheduler does. B
 * must get the lock and write within the documented bound, in the default mode (plain SQL
 * rewritten) and in trigger mode, and A's write must never commit. The control runs the same job
 * without fencing: nothing blocks B, and A's write commits after B's.
 */
class FrozenHolderTakeoverTest {

  private static final String URL = ShedLockFixture.URL;
  private static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(2);

  /**
   * How long after A's lease ended B must be writing: the server ends A's idle transaction one
   * lease time after its last statement, and B's registration ends a stale blocker after a quarter
   * of the lease time; one lease time on top is for a loaded machine. The defect this guards
   * against blocked the successor for as long as the holder stayed frozen.
   */
  private static final Duration TAKEOVER_BOUND = LOCK_AT_MOST_FOR.multipliedBy(2);

  enum Mode {
    DEFAULT_MODE,
    TRIGGER_MODE
  }

  private static String schema;
  private static String fenceSchema;
  private static String prefix;
  private static HikariDataSource pool;
  private static FencedDataSource defaultMode;
  private static FencedDataSource triggerMode;
  private static org.redisson.api.RedissonClient redisson;
  private static final List<RedisLeaseManager> managers = new ArrayList<>();

  private final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeAll
  static void setUp() throws SQLException {
    ShedLockFixture.checkPostgres();
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = "fz_" + suffix;
    fenceSchema = "fzf_" + suffix;
    prefix = "fz-" + suffix + ":";
    exec(
        "CREATE SCHEMA " + schema,
        "CREATE TABLE "
            + schema
            + ".charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,"
            + " amount bigint NOT NULL)",
        "CREATE TABLE "
            + schema
            + ".enforced_charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,"
            + " amount bigint NOT NULL)",
        "CREATE TABLE "
            + schema
            + ".plain_charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,"
            + " amount bigint NOT NULL)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(URL);
    config.setMaximumPoolSize(8);
    config.setPoolName("frozen-holder-" + suffix);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool,
        MigrationOptions.builder()
            .schema(fenceSchema)
            .fence(schema + ".charges")
            .enforce(schema + ".enforced_charges", EnforcementMode.STRICT)
            .build());
    defaultMode = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceSchema));
    triggerMode =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(true));
    redisson = RedisServers.connectShared();
    warmUp(defaultMode, schema + ".charges");
    warmUp(triggerMode, schema + ".enforced_charges");
  }

  /**
   * One fenced write per mode before the runs: the first plain statement of a data source reads the
   * catalog and loads the rewriter, which on a loaded machine can take longer than the 2 s lease.
   */
  private static void warmUp(FencedDataSource db, String charges) throws SQLException {
    try (FencedLeaseManager manager = new FencedLeaseManager(leases(), db.fence());
        Lease lease =
            manager.acquire(
                "warm-up-" + charges, LeaseRequest.forLeaseTime(Duration.ofSeconds(60)))) {
      Fencing.run(
          lease,
          () -> {
            try (Connection c = db.getConnection()) {
              charge(c, charges, 0);
            }
          });
    }
  }

  @AfterAll
  static void tearDown() {
    managers.forEach(RedisLeaseManager::close);
    redisson.getKeys().deleteByPattern(prefix + "*");
    pool.close();
    exec(
        "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
        "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
    redisson.shutdown();
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void aSuccessorTakesOverFromAHolderFrozenInsideATransactionWithinTheBound(Mode mode)
      throws Exception {
    FencedDataSource db = mode == Mode.DEFAULT_MODE ? defaultMode : triggerMode;
    String charges = schema + (mode == Mode.DEFAULT_MODE ? ".charges" : ".enforced_charges");
    long customer = mode == Mode.DEFAULT_MODE ? 1_000 : 2_000;

    Run run =
        run(
            new FencedLeaseManager(leases(), db.fence()),
            new FencedLeaseManager(leases(), db.fence()),
            db,
            charges,
            customer);

    assertThat(run.takeover())
        .as("B wrote within %s of A's lease ending (%s)", TAKEOVER_BOUND, mode)
        .isLessThanOrEqualTo(TAKEOVER_BOUND);
    assertThat(run.aFailure()).as("A's commit after the freeze").isNotNull();
    assertThat(count(charges, customer)).as("A's charge never committed").isZero();
    assertThat(count(charges, customer + 1)).as("B's charge").isEqualTo(1);
  }

  @Test
  void withoutFencingTheFrozenHoldersWriteCommitsAfterItsSuccessors() throws Exception {
    String charges = schema + ".plain_charges";
    long customer = 3_000;

    Run run = run(leases(), leases(), pool, charges, customer);

    assertThat(run.aFailure()).as("A's commit after the freeze").isNull();
    assertThat(count(charges, customer)).as("A's stale charge committed").isEqualTo(1);
    assertThat(count(charges, customer + 1)).as("B's charge").isEqualTo(1);
  }

  /** What one run measured. */
  private record Run(Duration takeover, Throwable aFailure) {}

  /**
   * A takes the lock, charges {@code customer} inside a transaction and freezes; once A's lease has
   * ended, B polls for the lock and charges {@code customer + 1}; then A resumes and commits.
   */
  private Run run(
      LeaseManager leasesA, LeaseManager leasesB, DataSource db, String charges, long customer)
      throws Exception {
    String lockName = "frozen-" + customer;
    LockingTaskExecutor instanceA =
        new DefaultLockingTaskExecutor(
            new FencedLockProvider(leasesA, FencedLockOptions.defaults()));
    LockingTaskExecutor instanceB =
        new DefaultLockingTaskExecutor(
            new FencedLockProvider(leasesB, FencedLockOptions.defaults()));
    CountDownLatch frozen = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);

    Future<?> a =
        threads.submit(
            () -> {
              try {
                instanceA.executeWithLock(
                    (LockingTaskExecutor.Task)
                        () -> {
                          try (Connection c = db.getConnection()) {
                            c.setAutoCommit(false);
                            charge(c, charges, customer);
                            frozen.countDown();
                            resume.await(); // the freeze, inside the transaction
                            c.commit();
                          }
                        },
                    config(lockName));
              } catch (Exception | Error e) {
                throw e;
              } catch (Throwable t) {
                throw new IllegalStateException(t);
              }
              return null;
            });
    if (!frozen.await(10, TimeUnit.SECONDS)) {
      a.get(1, TimeUnit.SECONDS); // A's own failure, if it failed before freezing
      throw new AssertionError("A neither wrote nor failed within 10 s");
    }
    long leaseEnds = System.nanoTime() + LOCK_AT_MOST_FOR.toNanos();

    Future<Long> b =
        threads.submit(
            () -> {
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
              while (System.nanoTime() < deadline) {
                try {
                  LockingTaskExecutor.TaskResult<Boolean> result =
                      instanceB.executeWithLock(
                          () -> {
                            try (Connection c = db.getConnection()) {
                              charge(c, charges, customer + 1);
                            }
                            return true;
                          },
                          config(lockName));
                  if (result.wasExecuted()) {
                    return System.nanoTime();
                  }
                } catch (Throwable t) {
                  // the scheduler logs a failed lock attempt and polls again, as here
                }
                Thread.sleep(20);
              }
              throw new AssertionError("B never got the lock within 30 s");
            });
    long bWrote = b.get(40, TimeUnit.SECONDS);
    resume.countDown();
    Throwable aFailure = null;
    try {
      a.get(15, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      aFailure = e.getCause();
    }
    Duration takeover = Duration.ofNanos(Math.max(0, bWrote - leaseEnds));
    System.out.printf(
        "frozen holder (%s): B wrote %d ms after A's lease ended; A: %s%n",
        charges,
        takeover.toMillis(),
        aFailure == null ? "committed" : aFailure.getClass().getSimpleName());
    return new Run(takeover, aFailure);
  }

  private static void charge(Connection c, String charges, long customer) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement("INSERT INTO " + charges + " (customer_id, amount) VALUES (?, 100)")) {
      s.setLong(1, customer);
      s.executeUpdate();
    }
  }

  private static LockConfiguration config(String name) {
    return new LockConfiguration(ClockProvider.now(), name, LOCK_AT_MOST_FOR, Duration.ZERO);
  }

  private static synchronized RedisLeaseManager leases() {
    RedisLeaseManager manager =
        RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
    managers.add(manager);
    return manager;
  }

  private static long count(String charges, long customer) throws SQLException {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM " + charges + " WHERE customer_id = " + customer)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }
}
