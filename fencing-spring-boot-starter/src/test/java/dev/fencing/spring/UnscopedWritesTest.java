package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.spring.orm.Charges;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import dev.fencing.spring.orm.SelfInvokingJob;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A write on a fenced table outside any fencing scope, in the default mode: nothing fences it. The
 * usual cause, a {@code @Fenced} method called from another method of its own bean (self-invocation
 * bypasses the Spring proxy), is logged once per table and call site by default ({@code
 * fencing.unscoped-writes=warn}) and refused with {@code refuse}; {@code ignore} is the control:
 * the write lands unnoticed, as it did before the check existed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnscopedWritesTest {

  private static final String WARNING = "ran outside any fencing scope";

  private final String schema = "spring_unscoped_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private ConfigurableApplicationContext warn;
  private ConfigurableApplicationContext refuse;
  private ConfigurableApplicationContext ignore;

  @BeforeAll
  void start() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    warn = start(null);
    refuse = start("refuse");
    ignore = start("ignore");
    TestDatabase.execute("INSERT INTO \"" + schema + "\".customers SELECT generate_series(1, 20)");
  }

  private ConfigurableApplicationContext start(String unscopedWrites) {
    String tables =
        String.join(
            ",",
            schema + ".charges",
            schema + ".jpa_charges",
            schema + ".jpa_invoices",
            schema + ".jdbc_charges");
    SpringApplicationBuilder app =
        new SpringApplicationBuilder(OrmApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> c.getBeanFactory().registerSingleton("lossHook", (LossHook) point -> {}))
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/orm",
                "spring.jpa.open-in-view=false",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.tables=" + tables,
                "orm.resource=unscoped");
    if (unscopedWrites != null) {
      app.properties("fencing.unscoped-writes=" + unscopedWrites);
    }
    return app.run();
  }

  @AfterAll
  void stop() throws SQLException {
    for (ConfigurableApplicationContext c :
        new ConfigurableApplicationContext[] {warn, refuse, ignore}) {
      if (c != null) {
        c.close();
      }
    }
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @BeforeEach
  void emptyTables() throws SQLException {
    TestDatabase.execute(
        "TRUNCATE \""
            + schema
            + "\".charges, \""
            + schema
            + "\".jpa_charges, \""
            + schema
            + "\".jdbc_charges");
  }

  @Test
  void aSelfInvokedFencedMethodsWriteIsLoggedOncePerCallSiteAndStillRuns() throws SQLException {
    SelfInvokingJob job = warn.getBean(SelfInvokingJob.class);
    String log =
        capturingStderr(
            () -> {
              job.billThroughSelfInvocation(Charges.Style.JDBC_TEMPLATE, 1);
              job.billThroughSelfInvocation(Charges.Style.JDBC_TEMPLATE, 2);
              job.billThroughSelfInvocation(Charges.Style.JDBC_TEMPLATE, 3);
            });
    System.out.println("[unscoped, warn] logged:\n" + log);
    assertThat(count(log, WARNING)).as("one warning for one table and call site").isOne();
    assertThat(log)
        .contains("fenced table " + schema + ".charges")
        .contains("INSERT INTO charges")
        .contains("self-invocation")
        .contains("fencing.unscoped-writes=refuse")
        .contains(Charges.class.getName() + ".write");
    assertThat(rows("charges")).as("warn lets the write run").isEqualTo(3);

    String other =
        capturingStderr(() -> job.billThroughSelfInvocation(Charges.Style.SPRING_DATA_JDBC, 4));
    assertThat(count(other, WARNING)).as("another table: its own warning").isOne();
    assertThat(other).contains("fenced table " + schema + ".jdbc_charges");
  }

  @Test
  void theSameWriteThroughTheProxyRunsInTheScopeAndIsNotLogged() throws SQLException {
    SelfInvokingJob job = warn.getBean(SelfInvokingJob.class);
    String log =
        capturingStderr(
            () -> {
              job.billFenced(Charges.Style.JDBC_TEMPLATE, 5);
              job.billFenced(Charges.Style.JPA_REPOSITORY, 5);
              job.billFenced(Charges.Style.SPRING_DATA_JDBC, 5);
            });
    assertThat(log).doesNotContain(WARNING);
    assertThat(rows("charges") + rows("jpa_charges") + rows("jdbc_charges")).isEqualTo(3);
  }

  @Test
  void writesOnTablesWithoutTheFenceColumnAreNotLogged() {
    JdbcTemplate jdbc = warn.getBean(JdbcTemplate.class);
    String log =
        capturingStderr(
            () -> {
              jdbc.update("INSERT INTO customers (id) VALUES (1000) ON CONFLICT DO NOTHING");
              jdbc.update("UPDATE customers SET id = id WHERE id = 1000");
              jdbc.queryForList("SELECT * FROM charges FOR UPDATE");
              jdbc.update("DELETE FROM customers WHERE id = 1000");
            });
    assertThat(log).doesNotContain(WARNING);
  }

  @Test
  void withRefuseTheSelfInvokedWriteIsRefusedBeforeReachingTheDatabase() throws SQLException {
    SelfInvokingJob job = refuse.getBean(SelfInvokingJob.class);
    for (Charges.Style style :
        List.of(
            Charges.Style.JDBC_TEMPLATE,
            Charges.Style.JPA_REPOSITORY,
            Charges.Style.SPRING_DATA_JDBC)) {
      assertThatThrownBy(() -> job.billThroughSelfInvocation(style, 6))
          .as(style.name())
          .satisfies(e -> System.out.println("[unscoped, refuse, " + style + "] " + e))
          .isInstanceOf(UnfencedWriteRefusedException.class)
          .hasMessageContaining("outside any fencing scope")
          .hasMessageContaining("@Fenced")
          .hasMessageContaining("fencing.unscoped-writes=warn")
          .hasMessageNotContaining("FenceOptions");
    }
    assertThat(rows("charges") + rows("jpa_charges") + rows("jdbc_charges"))
        .as("nothing written")
        .isZero();

    job.billFenced(Charges.Style.JDBC_TEMPLATE, 7);
    refuse.getBean(JdbcTemplate.class).update("UPDATE customers SET id = id WHERE id = 7");
    assertThat(rows("charges")).as("through the proxy: fenced, and written").isOne();
  }

  @Test
  void controlWithIgnoreTheSelfInvokedWriteLandsUnnoticed() throws SQLException {
    SelfInvokingJob job = ignore.getBean(SelfInvokingJob.class);
    String log =
        capturingStderr(() -> job.billThroughSelfInvocation(Charges.Style.JDBC_TEMPLATE, 8));
    assertThat(log).doesNotContain(WARNING);
    assertThat(rows("charges")).as("written without any lease").isOne();
  }

  private int rows(String table) throws SQLException {
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM \"" + schema + "\"." + table)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static int count(String text, String what) {
    Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  /** Runs {@code work} and returns what was logged meanwhile (slf4j-simple logs to stderr). */
  private static String capturingStderr(Runnable work) {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      work.run();
    } finally {
      System.setErr(original);
    }
    String text = captured.toString(StandardCharsets.UTF_8);
    original.print(text);
    return text;
  }
}
