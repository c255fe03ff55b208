package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The replay, counted in the database: modes 1-3 double-charge, mode 4 does not and the database
 * rejects the stale write.
 */
class IncidentReplayTest {

  private static TestServers.Db db;
  private static RedissonClient redisson;
  private static IncidentReplay replay;
  private static String keyPrefix;

  @BeforeAll
  static void setUp() throws Exception {
    TestServers.requireRedis();
    db = new TestServers.Db("replay_test");
    redisson = Servers.redisson(TestServers.REDIS);
    keyPrefix = "fencing-examples-test-" + TestServers.suffix() + ":";
    IncidentReplay.Settings settings =
        new IncidentReplay.Settings(700, Duration.ofMillis(1000), 1000, 100, "2026-01");
    replay =
        new IncidentReplay(
            db.pool,
            redisson,
            db.schema,
            new JdbcBillingDao(db.schema.database(), db.name()),
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
  void noLockDoubleChargesDuringARollingDeploy() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.NO_LOCK);

    assertThat(row.stats().activeCustomers()).isEqualTo(630);
    assertThat(row.stats().customersChargedTwice()).isPositive();
    assertThat(row.stats().charges())
        .isGreaterThanOrEqualTo(630 + row.stats().customersChargedTwice());
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.runs()).hasSize(2);
  }

  @Test
  void naiveLockDoubleChargesAndDeletesTheSuccessorsLock() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.NAIVE_LOCK);

    assertThat(row.stats().customersChargedTwice()).isPositive();
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.locksDeletedByNonOwner()).isGreaterThanOrEqualTo(1);
    assertThat(row.runs()).extracting(RunResult::runId).contains("run-A", "run-B", "run-C");
    assertThat(IncidentReplay.format(row)).startsWith("2 naive lock");
  }

  @Test
  void tokenAndHeartbeatStillDoubleChargesTheCustomerWrittenAfterThePause() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.TOKEN_HEARTBEAT);

    // The control for mode 4: the same pause, no fencing. A's one in-flight write lands.
    assertThat(row.stats().customersChargedTwice()).isPositive();
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.stats().staleWritesRejected()).isZero();
    assertThat(row.locksDeletedByNonOwner()).as("compare-and-delete").isZero();
    RunResult a = run(row, "run-A");
    assertThat(a.stoppedEarly()).isEqualTo("lost the lock");
    assertThat(a.release()).isEqualTo(LockStrategy.Release.NOTHING_RELEASED);
    assertThat(run(row, "run-B").acquired()).isTrue();
    assertThat(run(row, "run-C").acquired()).as("B's lease survived A's release").isFalse();
    assertThat(chargesByRun("run-A")).isEqualTo(a.charged());
  }

  @Test
  void fencedRejectsTheStaleWriteInTheDatabaseAndChargesEveryoneOnce() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.FENCED);

    assertThat(row.stats().customersChargedTwice()).isZero();
    assertThat(row.stats().charges()).isEqualTo(630);
    assertThat(row.stats().activeNotCharged()).isZero();
    assertThat(row.stats().staleWritesRejected()).isPositive();
    assertThat(row.locksDeletedByNonOwner()).isZero();
    RunResult a = run(row, "run-A");
    assertThat(a.stoppedEarly()).startsWith("the database rejected a stale write");
    assertThat(a.staleWritesRejected()).isEqualTo(1);
    assertThat(run(row, "run-C").acquired()).isFalse();
    // What PostgreSQL said, as recorded: A's token against B's newer registration.
    try (var c = db.pool.getConnection();
        var st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT run_id, sqlstate, resource, attempted_token, current_token FROM "
                    + db.name()
                    + ".rejected_writes WHERE rejected_by = 'database'")) {
      assertThat(rs.next()).isTrue();
      assertThat(rs.getString(1)).isEqualTo("run-A");
      assertThat(rs.getString(2)).isEqualTo("ZF001");
      assertThat(rs.getString(3)).isEqualTo(LeaseLockStrategy.RESOURCE);
      assertThat(rs.getLong(5)).isGreaterThan(rs.getLong(4));
      assertThat(rs.next()).isFalse();
    }
    // Every committed row was stamped with the writer's token by the enforcement trigger.
    assertThat(count("charges WHERE fence_token = 0")).isZero();
    assertThat(count("invoices WHERE fence_token = 0")).isZero();
  }

  private static RunResult run(IncidentReplay.Row row, String runId) {
    return row.runs().stream().filter(r -> r.runId().equals(runId)).findFirst().orElseThrow();
  }

  private static long chargesByRun(String runId) throws Exception {
    return count("charges WHERE run_id = '" + runId + "'");
  }

  private static long count(String fromWhere) throws Exception {
    try (var c = db.pool.getConnection();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT count(*) FROM " + db.name() + "." + fromWhere)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
