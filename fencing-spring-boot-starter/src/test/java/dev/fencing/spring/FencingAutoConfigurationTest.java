package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration;
import org.springframework.boot.autoconfigure.flyway.FlywayMigrationInitializer;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

class FencingAutoConfigurationTest {

  private final String schema = "spring_autoconf_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";

  private ApplicationContextRunner runner;

  @BeforeEach
  void runner() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    runner =
        new ApplicationContextRunner()
            .withConfiguration(
                AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class,
                    FlywayAutoConfiguration.class,
                    FencingAutoConfiguration.class))
            .withPropertyValues(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=2",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/billing",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=fencing-spring-test:" + schema + ":",
                "fencing.migrations.tables=" + schema + ".charges");
  }

  @AfterEach
  void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  private ApplicationContextRunner withRedisson() {
    return runner.withBean(
        RedissonClient.class,
        RedisServers::connectShared,
        definition -> definition.setDestroyMethodName("shutdown"));
  }

  @Test
  void backsOffWithoutRedissonOrLeaseManager() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(LeaseManager.class);
          assertThat(context).doesNotHaveBean("fencedMethodAdvisor");
          assertThat(context).doesNotHaveBean(FencingProperties.class);
          assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
        });
  }

  @Test
  void backsOffWhenDisabled() {
    withRedisson()
        .withPropertyValues("fencing.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(LeaseManager.class);
              assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class);
            });
  }

  @Test
  void configuresAFencedLeaseManagerOnTheApplicationsRedisson() {
    withRedisson()
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(LeaseManager.class);
              assertThat(context.getBean(LeaseManager.class))
                  .isInstanceOf(FencedLeaseManager.class);
            });
  }

  @Test
  void usersLeaseManagerWins() {
    withRedisson()
        .withBean(
            "ownLeaseManager",
            LeaseManager.class,
            () ->
                RedisLeaseManager.create(
                    RedisServers.connectShared(), LeaseOptions.defaults().withKeyPrefix("own:")))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(LeaseManager.class);
              assertThat(context.getBean(LeaseManager.class))
                  .isSameAs(context.getBean("ownLeaseManager"))
                  .isInstanceOf(RedisLeaseManager.class);
              assertThat(context).hasBean("fencedMethodAdvisor");
            });
  }

  @Test
  void wrapsTheApplicationsDataSourceExactlyOnceAndEveryUserSeesTheSameObject() {
    withRedisson()
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBeansOfType(DataSource.class)).hasSize(1);
              DataSource dataSource = context.getBean(DataSource.class);
              assertThat(dataSource).isInstanceOf(FencedDataSource.class);
              // in the default mode, the pool behind the check of writes outside any scope
              DataSource pool =
                  ((FencedDataSource) dataSource).delegate().unwrap(HikariDataSource.class);
              assertThat(pool).isNotNull();
              assertThat(dataSource.unwrap(HikariDataSource.class)).isSameAs(pool);
              assertThat(dataSource.isWrapperFor(HikariConfigMXBean.class)).isTrue();
              assertThat(context.getBean(JdbcTemplate.class).getDataSource()).isSameAs(dataSource);
              assertThat(context.getBean(DataSourceTransactionManager.class).getDataSource())
                  .isSameAs(dataSource);
              assertThat(context.getBean(Flyway.class).getConfiguration().getDataSource())
                  .isSameAs(dataSource);
            });
  }

  @Test
  void flywayAutoConfigurationStaysOnAndTheFenceMigrationsKeepTheirOwnHistory() {
    withRedisson()
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Flyway.class);
              assertThat(context).hasSingleBean(FlywayMigrationInitializer.class);
              JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
              List<String> appVersions =
                  jdbc.queryForList(
                      "SELECT version FROM \""
                          + schema
                          + "\".flyway_schema_history WHERE version IS NOT NULL ORDER BY 1",
                      String.class);
              assertThat(appVersions).containsExactly("1");
              Integer fenceMigrations =
                  jdbc.queryForObject(
                      "SELECT count(*) FROM \"" + fenceSchema + "\".fencing_schema_history",
                      Integer.class);
              assertThat(fenceMigrations).isPositive();
              assertThat(
                      jdbc.queryForList(
                          "SELECT column_name FROM information_schema.columns"
                              + " WHERE table_schema = ? AND table_name = 'charges'",
                          String.class,
                          schema))
                  .contains("fence_token");
            });
  }

  /** A job as an application writes it. */
  static class LockOnlyJob {
    @Fenced(resource = "lock-only", leaseTime = "10s", maxWait = "0s")
    public boolean runsHoldingALease() {
      return Fencing.currentLease().map(Lease::isHeld).orElse(false);
    }
  }

  @Test
  void lockOnlyTakesTheLeaseButLeavesTheDataSourceUnwrappedAndUnregistered() {
    withRedisson()
        .withPropertyValues("fencing.lock-only=true")
        .withBean(LockOnlyJob.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(DataSource.class).isWrapperFor(FencedDataSource.class))
                  .isFalse();
              assertThat(context)
                  .doesNotHaveBean(FencedLeaseManager.class)
                  .hasSingleBean(LeaseManager.class);
              assertThat(context.getBean(LockOnlyJob.class).runsHoldingALease()).isTrue();
            });
    withRedisson()
        .withPropertyValues("fencing.enabled=false")
        .withBean(LockOnlyJob.class)
        .run(
            context ->
                assertThat(context.getBean(LockOnlyJob.class).runsHoldingALease())
                    .as("fencing.enabled=false: no lock either")
                    .isFalse());
  }

  @Test
  void theHealthIndicatorIsUpWithRedisAndTheMigratedFenceAndDownWithoutTheFence() {
    withRedisson()
        .run(
            context -> {
              Health health =
                  context.getBean("fencingHealthIndicator", HealthIndicator.class).health();
              assertThat(health.getStatus()).isEqualTo(Status.UP);
              assertThat(health.getDetails())
                  .containsEntry("redis", "reachable")
                  .containsEntry("contractVersion", FenceSchema.CONTRACT_VERSION);
            });
    withRedisson()
        .withPropertyValues(
            "fencing.migrations.enabled=false", "fencing.schema=" + fenceSchema + "_missing")
        .run(
            context -> {
              Health health =
                  context.getBean("fencingHealthIndicator", HealthIndicator.class).health();
              assertThat(health.getStatus()).isEqualTo(Status.DOWN);
              assertThat(health.getDetails().get("contract").toString())
                  .contains("run the fence migrations");
            });
  }
}
