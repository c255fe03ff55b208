package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * {@link IncidentReplayTest}'s lease modes on MariaDB, counted in the database: the same pause
 * without fencing (mode 3, the control) double-charges; with fencing (mode 4: guarded statements,
 * MariaDB has no trigger mode) the stale holder's write is refused by the database and nobody is
 * charged twice.
 */
class MariaDbIncidentReplayTest {

  private static TestServers.Db db;
  private static RedissonClient redisson;
  private static IncidentReplay replay;
  private static String keyPrefix;

  @BeforeAll
  static void setUp() throws Exception {
    TestServers.requireRedis();
    db = new TestServers.Db(TestServers.MARIADB, "replay_test");
    assertThat(db.schema.database()).isEqualTo(BillingDatabase.MARIADB);
    redisson = Servers.redisson(TestServers.REDIS);
    keyPrefix = "fencing-examples-test-" + TestServers.suffix() + ":";
    IncidentReplay.Settings settings =
        new IncidentReplay.Settings(700, Duration.ofMillis(1000), 1000, 100, "2026-01");
    replay =
        new IncidentReplay(
            db.pool,
            redisson,
            db.schema,
            new JdbcBillingDao(BillingDatabase.MARIADB, db.name()),
            keyPrefix,
            settings,
            line -> {});
    db.schema.seedCustomers(settings.customers());
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (redisson != null) {
      redisson.getKeys().deleteByPattern(keyPrefix + "*");
      redisson.shutdown();
    }
    if (db != null) {
      db.close();
    }
  }

  @Test
  void tokenAndHeartbeatStillDoubleChargesTheCustomerWrittenAfterThePause() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.TOKEN_HEARTBEAT);

    // The control for mode 4: the same pause, no fencing. A's one in-flight write lands.
    assertThat(row.stats().activeCustomers()).isEqualTo(630);
    assertThat(row.stats().customersChargedTwice()).isPositive();
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.stats().staleWritesRejected()).isZero();
    RunResult a = run(row, "run-A");
    assertThat(a.stoppedEarly()).isEqualTo("lost the lock");
    assertThat(run(row, "run-B").acquired()).isTrue();
    assertThat(run(row, "run-C").acquired()).as("B's lease survived A's release").isFalse();
    assertThat(count("charges WHERE run_id = 'run-A'")).isEqualTo(a.charged());
  }

  @Test
  void fencedRejectsTheStaleWriteInTheDatabaseAndChargesEveryoneOnce() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.FENCED);

    assertThat(row.wasSkipped()).isFalse();
    assertThat(row.stats().customersChargedTwice()).isZero();
    assertThat(row.stats().charges()).isEqualTo(630);
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.stats().staleWritesRejected()).isPositive();
    RunResult a = run(row, "run-A");
    assertThat(a.stoppedEarly())
        .startsWith("the database rejected a stale write: stale fencing token for resource");
    assertThat(a.staleWritesRejected()).isEqualTo(1);
    assertThat(run(row, "run-C").acquired()).isFalse();
    try (var c = db.pool.getConnection();
        var st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT run_id, `sqlstate`, resource, attempted_token, current_token FROM `"
                    + db.name()
                    + "`.rejected_writes WHERE rejected_by = 'database'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo("run-A");
      assertThat(rs.getString(2)).isEqualTo("ZF001");
      assertThat(rs.getString(3)).isEqualTo(LeaseLockStrategy.RESOURCE);
      assertThat(rs.getLong(5)).isGreaterThan(rs.getLong(4));
      assertThat(rs.next()).isFalse();
    }
    // Every committed row was stamped by the guarded insert of its writer, none by run-A after
    // the pause: A's rows all carry its token, the customer it was about to write is B's.
    assertThat(count("charges WHERE fence_token = 0")).isZero();
    assertThat(count("invoices WHERE fence_token = 0")).isZero();
    assertThat(count("charges WHERE run_id = 'run-A'")).isEqualTo(a.charged());
  }

  private static RunResult run(IncidentReplay.Row row, String runId) {
    return row.runs().stream().filter(r -> r.runId().equals(runId)).findFirst().orElseThrow();
  }

  private static long count(String fromWhere) throws Exception {
    try (var c = db.pool.getConnection();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT count(*) FROM `" + db.name() + "`." + fromWhere)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
