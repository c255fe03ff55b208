package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.spring.orm.Charges;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import dev.fencing.spring.orm.OrmBillingJob;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Fencing's refusals of writes it cannot fence reach a Spring Boot application as {@link
 * UnfencedWriteRefusedException}, whatever the style, with a message that names the {@code
 * fencing.*} properties rather than {@code FenceOptions} or the migrations CLI: plain SQL refused
 * ({@code fencing.plain-sql=refuse}), and a strictly enforced table written without trigger mode
 * ({@code fencing.trigger-mode=false}: the trigger's {@code ZF003}).
 */
class UnfencedWriteRefusalMessagesTest {

  private final String schema = "spring_refusal_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private ConfigurableApplicationContext context;

  @BeforeEach
  void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @AfterEach
  void stop() throws SQLException {
    if (context != null) {
      context.close();
    }
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  private void start(String... properties) throws SQLException {
    String tables =
        String.join(",", schema + ".charges", schema + ".jpa_charges", schema + ".jdbc_charges");
    context =
        new SpringApplicationBuilder(OrmApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> c.getBeanFactory().registerSingleton("lossHook", (LossHook) point -> {}))
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/orm",
                "spring.jpa.open-in-view=false",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.tables=" + tables,
                "orm.resource=refusals")
            .properties(properties)
            .run();
    TestDatabase.execute("INSERT INTO \"" + schema + "\".customers VALUES (1)");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Charges.Style.class,
      names = {"JDBC_TEMPLATE", "JPA_REPOSITORY", "SPRING_DATA_JDBC"})
  void plainSqlRefusedNamesTheBootProperties(Charges.Style style) throws SQLException {
    start("fencing.plain-sql=refuse");
    OrmBillingJob job = context.getBean(OrmBillingJob.class);
    assertThatThrownBy(() -> job.bill(style, List.of(1L)))
        .satisfies(e -> System.out.println("[refusal, plain-sql=refuse, " + style + "] " + e))
        .isInstanceOf(UnfencedWriteRefusedException.class)
        .hasMessageContaining("fencing.plain-sql=refuse")
        .hasMessageContaining("fencing.migrations.enforce")
        .hasMessageContaining("Nothing was sent to the database")
        .hasMessageNotContaining("FenceOptions")
        .hasMessageNotContaining("--enforce");
    assertThat(rows()).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Charges.Style.class,
      names = {"JDBC_TEMPLATE", "JPA_REPOSITORY"})
  void aStrictlyEnforcedTableWithoutTriggerModeNamesFencingTriggerMode(Charges.Style style)
      throws SQLException {
    start(
        "fencing.migrations.enforce=" + schema + ".charges," + schema + ".jpa_charges",
        "fencing.trigger-mode=false");
    OrmBillingJob job = context.getBean(OrmBillingJob.class);
    assertThatThrownBy(() -> job.bill(style, List.of(1L)))
        .satisfies(e -> System.out.println("[refusal, ZF003, " + style + "] " + e))
        .isInstanceOf(UnfencedWriteRefusedException.class)
        .hasMessageContaining("fencing.trigger-mode=true")
        .hasMessageNotContaining("FenceOptions");
    assertThat(rows()).isZero();
  }

  private int rows() throws SQLException {
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM \""
                    + schema
                    + "\".charges) + (SELECT count(*) FROM \""
                    + schema
                    + "\".jpa_charges) + (SELECT count(*) FROM \""
                    + schema
                    + "\".jdbc_charges)")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
