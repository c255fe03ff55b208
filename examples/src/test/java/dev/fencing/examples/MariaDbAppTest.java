package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link AppTest}'s database cases on MariaDB ({@code -Dfencing.test.mariadb}, default {@code
 * jdbc:mariadb://127.0.0.1:3306/test?user=root}): the same commands with a MariaDB URL, the same
 * outcome. Each test works in a database of its own (and its fence database), dropped at the end.
 */
class MariaDbAppTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int app(Map<String, String> env, String... args) {
    return App.execute(
        args,
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private static void drop(String schema) {
    try (var pool = Servers.pool(TestServers.MARIADB, "mariadb-app-test", 1)) {
      new BillingSchema(pool, schema).drop();
    } catch (Exception e) {
      // best effort
    }
  }

  @Test
  void anUnreachableMariaDbIsOneLineNamingItAndExit1() {
    int status =
        app(
            Map.of(),
            "demo",
            "--jdbc-url",
            "jdbc:mariadb://127.0.0.1:1/test?user=root&password=secret",
            "--redis-url",
            TestServers.REDIS);
    assertThat(status).isEqualTo(App.FAILED);
    assertThat(err()).startsWith("error: cannot reach MariaDB at ").doesNotContain("secret");
    assertThat(err().strip().lines()).hasSize(1);
  }

  @Test
  void runBillsEveryActiveCustomerOnceAndASecondRunNobody() throws Exception {
    TestServers.requireMariaDb();
    String schema = "app_run_test_" + TestServers.suffix();
    try (var pool = Servers.pool(TestServers.MARIADB, "mariadb-app-test", 2)) {
      try {
        String[] args = {
          "run",
          "--jdbc-url",
          TestServers.MARIADB,
          "--schema",
          schema,
          "--customers",
          "120",
          "--period",
          "2026-04",
          "--dao",
          "jooq"
        };
        // The second run migrates again (idempotent) and finds nobody left to bill.
        assertThat(app(Map.of(), args)).as(err()).isEqualTo(App.OK);
        assertThat(app(Map.of(), args)).as(err()).isEqualTo(App.OK);
        BillingStats stats = BillingStats.query(pool, schema, "2026-04");
        assertThat(stats.activeCustomers()).isEqualTo(108);
        assertThat(stats.charges()).isEqualTo(108);
        assertThat(stats.customersChargedTwice()).isZero();
        assertThat(out()).contains("108 charged", "0 customers to bill");
      } finally {
        new BillingSchema(pool, schema).drop();
      }
    }
  }

  @Test
  void runWithTheFencedLeaseBillsEveryActiveCustomerOnceWithTokenStampedRows() throws Exception {
    TestServers.requireMariaDb();
    TestServers.requireRedis();
    String schema = "app_fenced_run_test_" + TestServers.suffix();
    try (var pool = Servers.pool(TestServers.MARIADB, "mariadb-app-test", 2)) {
      try {
        String[] args = {
          "run",
          "--jdbc-url",
          TestServers.MARIADB,
          "--redis-url",
          TestServers.REDIS,
          "--schema",
          schema,
          "--customers",
          "50",
          "--period",
          "2026-06",
          "--lock",
          "fenced"
        };
        assertThat(app(Map.of(), args)).as(err()).isEqualTo(App.OK);
        assertThat(app(Map.of(), args)).as(err()).isEqualTo(App.OK);
        BillingStats stats = BillingStats.query(pool, schema, "2026-06");
        assertThat(stats.charges()).isEqualTo(45);
        assertThat(stats.customersChargedTwice()).isZero();
        assertThat(out())
            .contains("writes fenced by guarded statements", "fenced lease acquired (token ")
            .contains("45 charged");
        for (String table : BillingSchema.FENCED_TABLES) {
          try (var c = pool.getConnection();
              var st = c.createStatement();
              var rs =
                  st.executeQuery(
                      "SELECT SUM(fence_token = 0), COUNT(DISTINCT fence_token),"
                          + " SUM(fence_resource IS NULL OR fence_resource <> 'billing-nightly')"
                          + " FROM `"
                          + schema
                          + "`."
                          + table)) {
            rs.next();
            assertThat(rs.getLong(1)).as(table + " rows not stamped by the guard").isZero();
            assertThat(rs.getLong(2)).as(table + ": one run wrote them all").isEqualTo(1);
            assertThat(rs.getLong(3)).as(table + " rows without the resource").isZero();
          }
        }
      } finally {
        new BillingSchema(pool, schema).drop();
      }
    }
  }

  @Test
  void demoOnMariaDbDoubleChargesWithoutFencingAndRejectsTheStaleWriteWithIt() throws Exception {
    TestServers.requireMariaDb();
    TestServers.requireRedis();
    String schema = "app_demo_test_" + TestServers.suffix();
    try {
      int status =
          app(
              Map.of(
                  "FENCING_JDBC_URL", TestServers.MARIADB, "FENCING_REDIS_URL", TestServers.REDIS),
              "demo",
              "--schema",
              schema,
              "--customers",
              "300",
              "--ttl-ms",
              "1000");
      assertThat(status).as(err()).isEqualTo(App.OK);
      assertThat(out())
          .contains("300 customers in MariaDB database " + schema)
          .contains("writes fenced by guarded statements")
          .contains(IncidentReplay.header())
          .containsPattern("(?m)^1 no lock +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^2 naive lock \\(SET NX PX, DEL\\) +270 +\\d+ +[1-9]\\d* +0 +[1-9]")
          // mode 3 is the control: the same pause, no fencing, and the stale write lands
          .containsPattern("(?m)^3 token \\+ heartbeat, no fencing +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^4 fenced +270 +270 +0 +[1-9]\\d* +0$");
      // Mode 4 ran last: its rejection is still recorded, with the figures the database gave.
      try (var pool = Servers.pool(TestServers.MARIADB, "mariadb-app-test", 1);
          var c = pool.getConnection();
          var st = c.createStatement();
          var rs =
              st.executeQuery(
                  "SELECT run_id, `sqlstate`, resource, attempted_token, current_token, message"
                      + " FROM `"
                      + schema
                      + "`.rejected_writes WHERE rejected_by = 'database'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("run-A");
        assertThat(rs.getString(2)).isEqualTo("ZF001");
        assertThat(rs.getString(3)).isEqualTo(LeaseLockStrategy.RESOURCE);
        assertThat(rs.getLong(5)).isGreaterThan(rs.getLong(4));
        assertThat(rs.getString(6)).startsWith("stale fencing token");
        assertThat(rs.next()).isFalse();
      }
    } finally {
      drop(schema);
    }
  }

  @Test
  void demoWithTheJooqDaoWritesThroughFencedDslOnMariaDb() {
    TestServers.requireMariaDb();
    TestServers.requireRedis();
    String schema = "app_demo_jooq_test_" + TestServers.suffix();
    try {
      int status =
          app(
              Map.of(),
              "demo",
              "--jdbc-url",
              TestServers.MARIADB,
              "--redis-url",
              TestServers.REDIS,
              "--schema",
              schema,
              "--customers",
              "300",
              "--ttl-ms",
              "1000",
              "--dao",
              "jooq",
              "--modes",
              "3,4");
      assertThat(status).as(err()).isEqualTo(App.OK);
      assertThat(out())
          .containsPattern("(?m)^3 token \\+ heartbeat, no fencing +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^4 fenced +270 +270 +0 +[1-9]\\d* +0$");
    } finally {
      drop(schema);
    }
  }

  @Test
  void triggerModeOnMariaDbIsSkippedWithTheLibrarysReasonNotACrash() {
    TestServers.requireMariaDb();
    TestServers.requireRedis();
    String schema = "app_demo_trigger_test_" + TestServers.suffix();
    try {
      int status =
          app(
              Map.of(),
              "demo",
              "--jdbc-url",
              TestServers.MARIADB,
              "--redis-url",
              TestServers.REDIS,
              "--schema",
              schema,
              "--customers",
              "100",
              "--ttl-ms",
              "1000",
              "--modes",
              "4",
              "--fence",
              "trigger");
      assertThat(status).as(err()).isEqualTo(App.OK);
      assertThat(err()).isEmpty();
      assertThat(out())
          .contains("mode 4 skipped: MariaDB refuses --fence trigger (use --fence guarded)")
          .contains("trigger mode is not offered on MariaDB")
          .containsPattern(
              "(?m)^4 fenced +skipped: MariaDB refuses --fence trigger \\(use --fence guarded\\)$");
    } finally {
      drop(schema);
    }
  }
}
