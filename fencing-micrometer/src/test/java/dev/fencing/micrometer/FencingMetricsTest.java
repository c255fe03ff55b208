package dev.fencing.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.jdbc.jooq.FencedDsl;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The meters against real Redis and PostgreSQL, read from a {@link SimpleMeterRegistry}. */
class FencingMetricsTest {

  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  private static String schema;
  private static String fenceSchema;
  private static String prefix;
  private static HikariDataSource pool;
  private static RedissonClient redisson;

  @BeforeAll
  static void setUp() throws SQLException {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("fm_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("fmf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fm-" + suffix + ":";
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
      s.execute("CREATE TABLE " + schema + ".notes (id bigserial PRIMARY KEY, note text)");
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at " + URL + " (" + e.getMessage() + ")", e);
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(URL);
    config.setMaximumPoolSize(4);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool,
        MigrationOptions.builder()
            .schema(fenceSchema)
            .enforce(schema + ".notes", EnforcementMode.STRICT)
            .build());
    redisson = RedisServers.connectShared();
  }

  @AfterAll
  static void tearDown() throws SQLException {
    redisson.getKeys().deleteByPattern(prefix + "*");
    redisson.shutdown();
    pool.close();
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA " + schema + " CASCADE");
      s.execute("DROP SCHEMA " + fenceSchema + " CASCADE");
    }
  }

  /** One instrumented "application": its registry, fenced data source and lease manager. */
  private record App(SimpleMeterRegistry registry, FencedDataSource db, LeaseManager leases)
      implements AutoCloseable {
    static App start(boolean tagResource) {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      FencingMetrics metrics = new FencingMetrics(registry, tagResource);
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
      return new App(registry, db, leases);
    }

    double count(String name, String... tags) {
      return registry.get(name).tags(tags).counter().count();
    }

    @Override
    public void close() {
      leases.close();
    }
  }

  @Test
  void shouldTimeAcquisitionsByOutcomeAndGaugeActiveLeases() {
    try (App app = App.start(false)) {
      Lease lease =
          app.leases().acquire("metrics-active", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
      assertThat(
              app.leases()
                  .tryAcquire("metrics-active", LeaseRequest.forLeaseTime(Duration.ofSeconds(30))))
          .isEmpty();
      assertThat(app.registry().get(FencingMetrics.ACTIVE).gauge().value()).isEqualTo(1);
      lease.close();

      assertThat(app.registry().get(FencingMetrics.ACTIVE).gauge().value()).isZero();
      assertThat(
              app.registry()
                  .get(FencingMetrics.ACQUISITIONS)
                  .tag("outcome", "acquired")
                  .timer()
                  .count())
          .isEqualTo(1);
      assertThat(
              app.registry()
                  .get(FencingMetrics.ACQUISITIONS)
                  .tag("outcome", "unavailable")
                  .timer()
                  .count())
          .isEqualTo(1);
      assertThat(app.count(FencingMetrics.REGISTRATIONS, "outcome", "registered")).isEqualTo(1);
      assertThat(app.registry().find(FencingMetrics.ACQUISITIONS).tagKeys("resource").meters())
          .as("no resource tag unless enabled")
          .isEmpty();
    }
  }

  @Test
  void shouldCountALossByReasonAndAStaleWriteTheDatabaseRejected() throws Exception {
    try (App app = App.start(true)) {
      Lease stale =
          app.leases().acquire("metrics-lost", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
      redisson.getBucket(prefix + "{metrics-lost}:lock", StringCodec.INSTANCE).delete();
      try (Lease successor =
          app.leases().acquire("metrics-lost", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))) {
        assertThatThrownBy(
                () ->
                    Fencing.run(
                        stale,
                        () -> {
                          try (Connection c = app.db().getConnection();
                              Statement s = c.createStatement()) {
                            s.executeUpdate(
                                "INSERT INTO " + schema + ".notes (note) VALUES ('stale')");
                          }
                        }))
            .isInstanceOf(StaleTokenException.class);
        assertThat(successor.isHeld()).isTrue();
      }
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (app.registry().find(FencingMetrics.LOST).counter() == null
          && System.nanoTime() < deadline) {
        Thread.sleep(10); // the loss is reported on the manager's event thread
      }

      assertThat(app.count(FencingMetrics.LOST, "reason", "superseded", "resource", "metrics-lost"))
          .isEqualTo(1);
      assertThat(app.count(FencingMetrics.REJECTED, "resource", "metrics-lost")).isEqualTo(1);
      assertThat(
              app.registry()
                  .get(FencingMetrics.ACTIVE)
                  .tag("resource", "metrics-lost")
                  .gauge()
                  .value())
          .isZero();
    }
  }

  @Test
  void shouldCountAStaleFencedDslWriteTheFenceRejected() {
    try (App app = App.start(true)) {
      Lease stale =
          app.leases().acquire("metrics-dsl", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
      redisson.getBucket(prefix + "{metrics-dsl}:lock", StringCodec.INSTANCE).delete();
      try (Lease successor =
          app.leases().acquire("metrics-dsl", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))) {
        FencedDsl fenced = new FencedDsl(FenceOptions.defaults().withSchema(fenceSchema));
        DSLContext ctx = DSL.using(app.db(), SQLDialect.POSTGRES);
        Field<String> note = DSL.field(DSL.name("note"), String.class);
        assertThatThrownBy(
                () ->
                    Fencing.call(
                        stale,
                        () ->
                            fenced.insert(
                                ctx, DSL.table(DSL.name(schema, "notes")), Map.of(note, "x"))))
            .isInstanceOf(DataAccessException.class)
            .hasCauseInstanceOf(StaleTokenException.class);
        assertThat(successor.isHeld()).isTrue();
      }
      assertThat(app.count(FencingMetrics.REJECTED, "resource", "metrics-dsl")).isEqualTo(1);
    }
  }

  @Test
  void aLeaseReleasedAfterItsLockExpiredCountsAsLostOnceAndOneReleasedInTimeDoesNot()
      throws Exception {
    try (App app = App.start(false)) {
      assertThat(app.count(FencingMetrics.LOST, "reason", "expired")).as("from the start").isZero();
      assertThat(app.count(FencingMetrics.REJECTED, "where", "jvm")).isZero();
      assertThat(app.count(FencingMetrics.REJECTED, "where", "database")).isZero();
      LeaseRequest request = LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withoutRenewal();
      app.leases().acquire("metrics-in-time", request).close();
      Lease late = app.leases().acquire("metrics-late", request);
      // the lock is gone before the holder releases, and before the heartbeat judged it lost
      redisson.getBucket(prefix + "{metrics-late}:lock", StringCodec.INSTANCE).delete();
      late.close();
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (app.count(FencingMetrics.LOST, "reason", "expired") == 0
          && System.nanoTime() < deadline) {
        Thread.sleep(10); // reported on the manager's event thread
      }
      assertThat(app.count(FencingMetrics.LOST, "reason", "expired")).isEqualTo(1);
      assertThat(app.registry().get(FencingMetrics.ACTIVE).gauge().value()).isZero();
      late.close();
      assertThat(app.count(FencingMetrics.LOST, "reason", "expired")).as("once").isEqualTo(1);
    }
  }

  @Test
  void shouldCountAStaleRegistrationAndTheCounterRecovery() {
    try (App app = App.start(false)) {
      app.leases()
          .acquire("metrics-recovery", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))
          .close();
      redisson
          .getBucket(prefix + "{metrics-recovery}:token", StringCodec.INSTANCE)
          .set("0"); // Redis lost its counter; the fence remembers token 1
      app.leases()
          .acquire("metrics-recovery", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))
          .close();

      assertThat(app.count(FencingMetrics.REGISTRATIONS, "outcome", "stale")).isEqualTo(1);
      assertThat(app.count(FencingMetrics.RECOVERIES)).isEqualTo(1);
      assertThat(app.count(FencingMetrics.REGISTRATIONS, "outcome", "registered")).isEqualTo(2);
    }
  }
}
