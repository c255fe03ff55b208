package dev.fencing.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.shedlock.FencedLockOptions;
import dev.fencing.shedlock.FencedLockProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * What the meters of two instances show when a ShedLock job on A pauses past {@code lockAtMostFor},
 * B runs it, and A resumes: on A one loss (expired) and one rejected write, on B one registration.
 */
class ShedLockMetersTest {

  static final String URL = FencingMetricsTest.URL;

  private static String schema;
  private static String fenceSchema;
  private static String prefix;
  private static HikariDataSource pool;
  private static RedissonClient redisson;

  @BeforeAll
  static void setUp() {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("fms_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("fmsf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fms-" + suffix + ":";
    exec(
        "CREATE SCHEMA " + schema,
        "CREATE TABLE " + schema + ".charges (id bigserial PRIMARY KEY, customer_id bigint)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(URL);
    config.setMaximumPoolSize(4);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool,
        MigrationOptions.builder()
            .schema(fenceSchema)
            .enforce(schema + ".charges", EnforcementMode.STRICT)
            .build());
    redisson = RedisServers.connectShared();
  }

  @AfterAll
  static void tearDown() {
    redisson.getKeys().deleteByPattern(prefix + "*");
    redisson.shutdown();
    pool.close();
    exec("DROP SCHEMA " + schema + " CASCADE", "DROP SCHEMA " + fenceSchema + " CASCADE");
  }

  static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL at " + URL + " failed: " + e.getMessage() + " (is it running?)", e);
    }
  }

  /** One application instance: its own registry, fenced data source and ShedLock executor. */
  private record Instance(
      SimpleMeterRegistry registry,
      FencedDataSource db,
      LeaseManager leases,
      LockingTaskExecutor executor) {
    static Instance start() {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      FencingMetrics metrics = new FencingMetrics(registry, false);
      FencedDataSource db =
          FencedDataSource.wrap(
              pool,
              FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(true),
              metrics.fenceObserver());
      LeaseManager leases =
          metrics.timed(
              new FencedLeaseManager(
                  RedisLeaseManager.create(
                      redisson,
                      LeaseOptions.defaults().withKeyPrefix(prefix),
                      metrics.leaseObserver()),
                  db.fence(),
                  metrics.fenceObserver()));
      return new Instance(
          registry,
          db,
          leases,
          new DefaultLockingTaskExecutor(
              new FencedLockProvider(leases, FencedLockOptions.defaults())));
    }

    void charge(long customer) throws SQLException {
      try (Connection c = db.getConnection();
          PreparedStatement s =
              c.prepareStatement("INSERT INTO " + schema + ".charges (customer_id) VALUES (?)")) {
        s.setLong(1, customer);
        s.executeUpdate();
      }
    }

    double count(String name, String... tags) {
      return registry.find(name).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
    }
  }

  private static LockConfiguration config() {
    return new LockConfiguration(
        ClockProvider.now(), "metered-billing", Duration.ofMillis(500), Duration.ZERO);
  }

  @Test
  void theStalledInstanceShowsOneLossAndOneRejectedWrite() throws Throwable {
    Instance a = Instance.start();
    Instance b = Instance.start();
    ExecutorService threads = Executors.newSingleThreadExecutor();
    CountDownLatch stalled = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    try {
      Future<?> aRun =
          threads.submit(
              () -> {
                try {
                  a.executor()
                      .executeWithLock(
                          (LockingTaskExecutor.Task)
                              () -> {
                                a.charge(1);
                                stalled.countDown();
                                resume.await();
                                a.charge(2);
                              },
                          config());
                } catch (Exception | Error e) {
                  throw e;
                } catch (Throwable t) {
                  throw new IllegalStateException(t);
                }
                return null;
              });
      assertThat(stalled.await(10, TimeUnit.SECONDS)).isTrue();
      boolean bRan = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!bRan && System.nanoTime() < deadline) {
        bRan =
            b.executor()
                .executeWithLock(
                    () -> {
                      b.charge(2);
                      return true;
                    },
                    config())
                .wasExecuted();
        if (!bRan) {
          Thread.sleep(10);
        }
      }
      assertThat(bRan).isTrue();
      resume.countDown();
      Throwable aFailure = null;
      try {
        aRun.get(10, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        aFailure = e.getCause();
      }
      assertThat(aFailure)
          .as("A's lease expired while it was paused: refused before reaching the database")
          .satisfiesAnyOf(
              e -> assertThat(e).isInstanceOf(LeaseLostException.class),
              e -> assertThat(e).hasRootCauseInstanceOf(LeaseLostException.class));

      assertThat(a.count(FencingMetrics.LOST, "reason", "expired")).isEqualTo(1);
      assertThat(a.count(FencingMetrics.REJECTED))
          .as("nothing reached the database, so it rejected nothing")
          .isZero();
      assertThat(a.count(FencingMetrics.REGISTRATIONS, "outcome", "registered")).isEqualTo(1);
      assertThat(b.count(FencingMetrics.REGISTRATIONS, "outcome", "registered")).isEqualTo(1);
      assertThat(b.count(FencingMetrics.LOST)).isZero();
      assertThat(b.count(FencingMetrics.REJECTED)).isZero();
      assertThat(
              b.registry()
                  .get(FencingMetrics.ACQUISITIONS)
                  .tag("outcome", "acquired")
                  .timer()
                  .count())
          .isEqualTo(1);
      assertThat(a.registry().get(FencingMetrics.ACTIVE).gauge().value()).isZero();
      assertThat(b.registry().get(FencingMetrics.ACTIVE).gauge().value()).isZero();
      System.out.printf(
          "meters: A lost{expired}=%.0f rejected=%.0f; B registrations{registered}=%.0f,"
              + " acquisitions{unavailable}=%d%n",
          a.count(FencingMetrics.LOST, "reason", "expired"),
          a.count(FencingMetrics.REJECTED),
          b.count(FencingMetrics.REGISTRATIONS, "outcome", "registered"),
          b.registry()
              .get(FencingMetrics.ACQUISITIONS)
              .tag("outcome", "unavailable")
              .timer()
              .count());
    } finally {
      threads.shutdownNow();
      a.leases().close();
      b.leases().close();
    }
  }
}
