package dev.fencing.spring.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.spring.probe.JpaRepositoryProbeTest.ProbeCharge;
import dev.fencing.spring.probe.JpaRepositoryProbeTest.ProbeChargeRepository;
import dev.fencing.testing.InMemoryLeaseManager;
import dev.fencing.testing.ProbeReport;
import dev.fencing.testing.RecordingDataSource;
import dev.fencing.testing.StaleWriterProbe;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.domain.EntityScan;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same Spring Data JPA repository as {@link JpaRepositoryProbeTest}, with the table fenced
 * (fence_token) but no trigger: Hibernate's SQL goes to the plain-SQL rewriter.
 */
@SpringBootTest(classes = JpaRepositoryRewriterProbeTest.RewriterJpaApp.class)
class JpaRepositoryRewriterProbeTest {

  private static final Logger log = LoggerFactory.getLogger(JpaRepositoryRewriterProbeTest.class);
  private static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
  private static final String SCHEMA =
      "spring_jpa_rewrite_" + UUID.randomUUID().toString().substring(0, 8);
  private static final String FENCE_SCHEMA = SCHEMA + "_fence";
  private static com.zaxxer.hikari.HikariDataSource pool;

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) {
    registry.add("spring.flyway.schemas", () -> SCHEMA);
    registry.add("spring.flyway.locations", () -> "classpath:db/billing");
    registry.add("spring.jpa.hibernate.ddl-auto", () -> "none");
    registry.add("spring.jpa.open-in-view", () -> "false");
    registry.add("fencing.schema", () -> FENCE_SCHEMA);
    registry.add("fencing.migrations.tables", () -> SCHEMA + ".charges");
  }

  @AfterAll
  static void dropSchemas() throws SQLException {
    if (pool != null) {
      pool.close();
    }
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS \"" + SCHEMA + "\" CASCADE");
      s.execute("DROP SCHEMA IF EXISTS \"" + FENCE_SCHEMA + "\" CASCADE");
    }
  }

  @Autowired DataSource dataSource;
  @Autowired ProbeChargeRepository repository;

  @BeforeEach
  void customer() throws SQLException {
    try (Connection c = ((FencedDataSource) dataSource).delegate().getConnection();
        Statement s = c.createStatement()) {
      s.execute("INSERT INTO customers (id) VALUES (1) ON CONFLICT DO NOTHING");
    }
  }

  @Test
  void savingAndUpdatingThroughTheRewriterIsFenced() {
    long[] id = new long[1];
    ProbeReport report =
        StaleWriterProbe.on((FencedDataSource) dataSource)
            .withSchemas(SCHEMA)
            .run(
                as -> {
                  if (as == StaleWriterProbe.Holder.FIRST_HOLDER) {
                    id[0] = repository.saveAndFlush(new ProbeCharge(1, 100)).id;
                    return;
                  }
                  ProbeCharge charge = repository.findById(id[0]).orElseThrow();
                  charge.amountCents += 1;
                  repository.saveAndFlush(charge);
                });

    log.info("report: {}; SQL in the stale run: {}", report.describe(), report.staleRunSql());
    assertThat(report.fenced()).as(report.describe()).isTrue();
    // Hibernate's UPDATE, as the rewriter sent it: with the row guard and the fence check
    assertThat(report.staleRunSql())
        .anyMatch(sql -> sql.startsWith("update charges set") && sql.contains("fence_token <="));
  }

  /** The application: leases in memory, the pool recorded under the starter's wrapper. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableJpaRepositories(
      considerNestedRepositories = true,
      basePackageClasses = JpaRepositoryProbeTest.class)
  @EntityScan(basePackageClasses = JpaRepositoryProbeTest.class)
  static class RewriterJpaApp {

    @Bean(destroyMethod = "close")
    LeaseManager leaseManager(DataSource dataSource) {
      return new FencedLeaseManager(
          InMemoryLeaseManager.create(), ((FencedDataSource) dataSource).fence());
    }

    @Bean(destroyMethod = "")
    DataSource dataSource() {
      com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
      config.setJdbcUrl(URL);
      config.setSchema(SCHEMA);
      config.setMaximumPoolSize(4);
      pool = new com.zaxxer.hikari.HikariDataSource(config);
      return RecordingDataSource.wrap(pool);
    }
  }
}
