package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.testing.InMemoryLeaseManager;
import dev.fencing.testing.StaleWriterProbe;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * When {@code fencing.test.in-memory-leases} applies: only when set and fencing-test-support is
 * there; the application's own lease manager still wins; with {@code fencing.lock-only} the leases
 * are in memory, registered in no fence, and there is no probe.
 */
class InMemoryLeasesConditionsTest {

  private final String schema = "spring_inmemc_" + UUID.randomUUID().toString().substring(0, 8);
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
                    FencingAutoConfiguration.class,
                    FencingTestAutoConfiguration.class))
            .withPropertyValues(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.maximum-pool-size=2",
                "fencing.schema=" + fenceSchema);
  }

  @AfterEach
  void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @Test
  void withoutThePropertyThereAreNoInMemoryLeasesAndNoProbe() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(LeaseManager.class);
          assertThat(context).doesNotHaveBean(StaleWriterProbe.class);
        });
  }

  @Test
  void withoutTestSupportOnTheClassPathThePropertyDoesNothing() {
    runner
        .withPropertyValues("fencing.test.in-memory-leases=true")
        .withClassLoader(new FilteredClassLoader(InMemoryLeaseManager.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(LeaseManager.class);
              assertThat(context).doesNotHaveBean(StaleWriterProbe.class);
            });
  }

  @Test
  void theApplicationsOwnLeaseManagerWins() {
    runner
        .withPropertyValues("fencing.test.in-memory-leases=true")
        .withBean(
            "ownLeases",
            LeaseManager.class,
            InMemoryLeaseManager::create,
            definition -> definition.setDestroyMethodName("close"))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context)
                  .getBean(LeaseManager.class)
                  .isSameAs(context.getBean("ownLeases"));
              assertThat(context).hasSingleBean(StaleWriterProbe.class);
            });
  }

  @Test
  void withThePropertyTheLeasesAreFencedAndInMemory() {
    runner
        .withPropertyValues("fencing.test.in-memory-leases=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context)
                  .getBean(LeaseManager.class)
                  .isInstanceOf(FencedLeaseManager.class);
              assertThat(context).hasSingleBean(StaleWriterProbe.class);
            });
  }

  @Test
  void lockOnlyLeasesAreInMemoryAndUnregisteredWithoutAProbe() {
    runner
        .withPropertyValues("fencing.test.in-memory-leases=true", "fencing.lock-only=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context)
                  .getBean(LeaseManager.class)
                  .isInstanceOf(InMemoryLeaseManager.class);
              assertThat(context).doesNotHaveBean(StaleWriterProbe.class);
            });
  }
}
