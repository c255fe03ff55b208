package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Modes 1 and 2 of the replay really double-charge: counted in the database. */
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
            new JdbcBillingDao(db.name()),
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
  void modesThreeAndFourArePlaceholdersForNow() throws Exception {
    IncidentReplay.Row row = replay.run(ReplayMode.FENCED);
    assertThat(row.pending()).isTrue();
    assertThat(IncidentReplay.format(row)).contains("pending");
  }
}
