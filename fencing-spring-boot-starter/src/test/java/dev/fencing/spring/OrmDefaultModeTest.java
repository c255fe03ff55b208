package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.spring.orm.Charges;
import dev.fencing.spring.orm.FencedProbes;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The ORM styles in the default mode (no trigger), in a service Boot auto-configures with Spring
 * Data JPA, Spring Data JDBC, JdbcTemplate and ShedLock:
 *
 * <ul>
 *   <li>a fenced transaction that wrote (and so holds the fence row) has the lease time as its
 *       {@code idle_in_transaction_session_timeout}, so a holder frozen inside it cannot block its
 *       successor's registration for longer, whichever style wrote, under {@code @Fenced} and under
 *       {@code @SchedulerLock};
 *   <li>Spring Data JDBC's {@code saveAll} of new aggregates gets their generated ids and stamps
 *       every row.
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OrmDefaultModeTest {

  private final String schema = "spring_ormdef_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private ConfigurableApplicationContext context;

  @BeforeAll
  void start() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    String tables =
        String.join(
            ",",
            schema + ".charges",
            schema + ".jpa_charges",
            schema + ".jpa_invoices",
            schema + ".jdbc_charges");
    context =
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
                "fencing.key-prefix=fencing-spring-test:" + schema + ":",
                "fencing.migrations.tables=" + tables,
                "orm.resource=orm-default-mode")
            .run();
    TestDatabase.execute("INSERT INTO \"" + schema + "\".customers SELECT generate_series(1, 5)");
  }

  @AfterAll
  void stop() throws SQLException {
    if (context != null) {
      context.close();
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
            + "\".jpa_invoices, \""
            + schema
            + "\".jdbc_charges");
  }

  /** The styles whose write has reached the database when the transaction shows its settings. */
  enum Written {
    JDBC_TEMPLATE(Charges.Style.JDBC_TEMPLATE),
    JPA_REPOSITORY(Charges.Style.JPA_REPOSITORY),
    ENTITY_MANAGER_FLUSH(Charges.Style.ENTITY_MANAGER_FLUSH),
    SPRING_DATA_JDBC(Charges.Style.SPRING_DATA_JDBC);

    final Charges.Style style;

    Written(Charges.Style style) {
      this.style = style;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Written.class)
  void everyStyleWritesInTheDefaultModeAndStampsTheLeaseToken(Written written) throws SQLException {
    context.getBean(FencedProbes.class).idleTimeoutUnderFenced(written.style, 2);
    String table =
        switch (written) {
          case JDBC_TEMPLATE -> "charges";
          case JPA_REPOSITORY -> "jpa_charges";
          case ENTITY_MANAGER_FLUSH -> "jpa_invoices";
          case SPRING_DATA_JDBC -> "jdbc_charges";
        };
    assertThat(tokensOf(table)).hasSize(1).allSatisfy(t -> assertThat(t).isPositive());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Written.class)
  void aFencedTransactionThatWroteHasTheLeaseTimeAsItsIdleTimeout(Written written) {
    String shown = context.getBean(FencedProbes.class).idleTimeoutUnderFenced(written.style, 1);
    System.out.println("[orm default mode, @Fenced, " + written + "] SHOW: " + shown);
    assertThat(shown).isEqualTo("7s");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Written.class)
  void aShedLockTransactionThatWroteHasTheLockTimeAsItsIdleTimeout(Written written) {
    String shown = context.getBean(FencedProbes.class).idleTimeoutUnderShedLock(written.style, 1);
    System.out.println("[orm default mode, @SchedulerLock, " + written + "] SHOW: " + shown);
    assertThat(shown).isEqualTo("7s");
  }

  @Test
  void springDataJdbcSaveAllOfNewAggregatesGetsTheirIdsAndStampsEveryRow() throws SQLException {
    List<Long> ids = context.getBean(FencedProbes.class).saveAllUnderFenced(List.of(1L, 2L, 3L));
    System.out.println("[orm default mode, saveAll] ids: " + ids);
    assertThat(ids).hasSize(3).doesNotContainNull().doesNotHaveDuplicates();
    assertThat(tokensOf("jdbc_charges")).hasSize(3).allSatisfy(t -> assertThat(t).isPositive());
  }

  private List<Long> tokensOf(String table) throws SQLException {
    List<Long> tokens = new ArrayList<>();
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT fence_token FROM \"" + schema + "\"." + table + " ORDER BY id")) {
      while (rs.next()) {
        tokens.add(rs.getLong(1));
      }
    }
    return tokens;
  }
}
