package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AppTest {

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

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "bill",
        "demo extra",
        "demo --customers",
        "demo --customers many",
        "demo --customers 0",
        "demo --modes 5",
        "demo --modes one",
        "demo --nope 1",
        "demo --dao hibernate",
        "demo --lock naive",
        "run --modes 1",
        "run --period 2026-1",
        "demo --jdbc-url mysql://x",
        "demo --jdbc-url jdbc:mysql://127.0.0.1/test",
        "demo --fence always",
        "demo --schema Bad-Name"
      })
  void badArgumentsPrintUsageOnStderrAndExit2(String line) {
    String[] args = line.isEmpty() ? new String[0] : line.split(" ");
    assertThat(app(Map.of(), args)).isEqualTo(App.USAGE);
    assertThat(err()).startsWith("error: ").contains("usage: java -jar fencing-examples.jar");
    assertThat(out()).isEmpty();
  }

  @Test
  void helpPrintsUsageWithTheEnvironmentVariables() {
    assertThat(app(Map.of(), "--help")).isEqualTo(App.OK);
    assertThat(out()).contains("demo", "run", "FENCING_JDBC_URL", "FENCING_REDIS_URL");
    assertThat(err()).isEmpty();
    assertThat(app(Map.of(), "demo", "-h")).isEqualTo(App.OK);
  }

  @Test
  void anUnreachablePostgresIsOneLineNamingItAndExit1() {
    int status =
        app(
            Map.of(),
            "demo",
            "--jdbc-url",
            "jdbc:postgresql://127.0.0.1:1/test?user=postgres&password=secret",
            "--redis-url",
            TestServers.REDIS);
    assertThat(status).isEqualTo(App.FAILED);
    assertThat(err()).startsWith("error: cannot reach PostgreSQL at ").doesNotContain("secret");
    assertThat(err().strip().lines()).hasSize(1);
  }

  @Test
  void anUnreachableRedisFromTheEnvironmentIsOneLineNamingItAndExit1() {
    TestServers.requirePostgres();
    int status =
        app(
            Map.of(
                "FENCING_JDBC_URL", TestServers.JDBC, "FENCING_REDIS_URL", "redis://127.0.0.1:1"),
            "demo");
    assertThat(status).isEqualTo(App.FAILED);
    assertThat(err().strip())
        .isEqualTo("error: cannot reach Redis at redis://127.0.0.1:1: no answer to PING");
  }

  @Test
  void runBillsEveryActiveCustomerOnceAndASecondRunNobody() throws Exception {
    TestServers.requirePostgres();
    String schema = "app_run_test_" + TestServers.suffix();
    try (var pool = Servers.pool(TestServers.JDBC, "app-test", 2)) {
      try {
        String[] args = {
          "run",
          "--jdbc-url",
          TestServers.JDBC,
          "--schema",
          schema,
          "--customers",
          "120",
          "--period",
          "2026-04",
          "--dao",
          "jooq"
        };
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
    TestServers.requirePostgres();
    TestServers.requireRedis();
    String schema = "app_fenced_run_test_" + TestServers.suffix();
    try (var pool = Servers.pool(TestServers.JDBC, "app-test", 2)) {
      try {
        String[] args = {
          "run",
          "--jdbc-url",
          TestServers.JDBC,
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
        assertThat(out()).contains("fenced lease acquired (token ", "45 charged");
        try (var c = pool.getConnection();
            var st = c.createStatement();
            var rs =
                st.executeQuery(
                    "SELECT count(*) FILTER (WHERE fence_token = 0), count(DISTINCT fence_token)"
                        + " FROM "
                        + schema
                        + ".charges")) {
          rs.next();
          assertThat(rs.getLong(1)).as("rows not stamped by the trigger").isZero();
          assertThat(rs.getLong(2)).as("one run wrote them all").isEqualTo(1);
        }
      } finally {
        new BillingSchema(pool, schema).drop();
      }
    }
  }

  @Test
  void demoAgainstTheTestServersPrintsTheTable() {
    TestServers.requirePostgres();
    TestServers.requireRedis();
    String schema = "app_demo_test_" + TestServers.suffix();
    try {
      int status =
          app(
              Map.of("FENCING_JDBC_URL", TestServers.JDBC, "FENCING_REDIS_URL", TestServers.REDIS),
              "demo",
              "--schema",
              schema,
              "--customers",
              "300",
              "--ttl-ms",
              "1000",
              "--dao",
              "jooq");
      assertThat(status).as(err()).isEqualTo(App.OK);
      assertThat(out())
          .contains(IncidentReplay.header())
          .containsPattern("(?m)^1 no lock +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^2 naive lock \\(SET NX PX, DEL\\) +270 +\\d+ +[1-9]\\d* +0 +[1-9]")
          .containsPattern("(?m)^3 token \\+ heartbeat, no fencing +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^4 fenced +270 +270 +0 +[1-9]\\d* +0$");
    } finally {
      try (var pool = Servers.pool(TestServers.JDBC, "app-test", 1)) {
        new BillingSchema(pool, schema).drop();
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Test
  void demoWithGuardedStatementsOnPostgresRejectsTheStaleWriteToo() {
    TestServers.requirePostgres();
    TestServers.requireRedis();
    String schema = "app_demo_guarded_test_" + TestServers.suffix();
    try {
      int status =
          app(
              Map.of("FENCING_JDBC_URL", TestServers.JDBC, "FENCING_REDIS_URL", TestServers.REDIS),
              "demo",
              "--schema",
              schema,
              "--customers",
              "300",
              "--ttl-ms",
              "1000",
              "--modes",
              "3,4",
              "--fence",
              "guarded");
      assertThat(status).as(err()).isEqualTo(App.OK);
      assertThat(out())
          .contains("writes fenced by guarded statements")
          .containsPattern("(?m)^3 token \\+ heartbeat, no fencing +270 +\\d+ +[1-9]\\d* +0 +0$")
          .containsPattern("(?m)^4 fenced +270 +270 +0 +[1-9]\\d* +0$");
    } finally {
      try (var pool = Servers.pool(TestServers.JDBC, "app-test", 1)) {
        new BillingSchema(pool, schema).drop();
      } catch (Exception e) {
        // best effort
      }
    }
  }
}
