package dev.fencing.spring.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.testing.InMemoryLeaseManager;
import dev.fencing.testing.ProbeReport;
import dev.fencing.testing.RecordingDataSource;
import dev.fencing.testing.StaleWriterProbe;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Spring Data JPA repository (Hibernate) under the stale-writer probe, in a {@code
 * SpringBootTest} of the starter. The table has the enforcement trigger (strict), so the starter
 * runs in trigger mode and Hibernate's SQL is checked by the database whatever its shape; the pool
 * (the application's {@code DataSource} bean) is a {@link RecordingDataSource}, which the starter
 * wraps in its {@link FencedDataSource}, so the report shows the SQL Hibernate sent through the
 * wrapper.
 */
@SpringBootTest(classes = JpaRepositoryProbeTest.ProbeJpaApp.class)
class JpaRepositoryProbeTest {

  private static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
  private static final String SCHEMA =
      "spring_jpa_probe_" + UUID.randomUUID().toString().substring(0, 8);
  private static final String FENCE_SCHEMA = SCHEMA + "_fence";

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) {
    registry.add("spring.flyway.schemas", () -> SCHEMA);
    registry.add("spring.flyway.locations", () -> "classpath:db/billing");
    registry.add("spring.jpa.hibernate.ddl-auto", () -> "none");
    registry.add("spring.jpa.open-in-view", () -> "false");
    registry.add("fencing.schema", () -> FENCE_SCHEMA);
    registry.add("fencing.migrations.tables", () -> SCHEMA + ".charges");
    registry.add("fencing.migrations.enforce", () -> SCHEMA + ".charges");
  }

  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(JpaRepositoryProbeTest.class);
  private static com.zaxxer.hikari.HikariDataSource POOL;

  @AfterAll
  static void dropSchemas() throws SQLException {
    if (POOL != null) {
      POOL.close();
    }
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS \"" + SCHEMA + "\" CASCADE");
      s.execute("DROP SCHEMA IF EXISTS \"" + FENCE_SCHEMA + "\" CASCADE");
    }
  }

  @Autowired DataSource dataSource;
  @Autowired ProbeChargeRepository repository;
  @Autowired ProbeCustomerRepository customers;

  private FencedDataSource fenced() {
    assertThat(dataSource).isInstanceOf(FencedDataSource.class);
    return (FencedDataSource) dataSource;
  }

  @BeforeEach
  void customer() throws SQLException { // customers is not enforced
    try (Connection c = fenced().delegate().getConnection();
        Statement s = c.createStatement()) {
      s.execute("INSERT INTO customers (id) VALUES (1) ON CONFLICT DO NOTHING");
    }
  }

  @Test
  void savingThroughTheJpaRepositoryIsFenced() {
    ProbeReport report =
        StaleWriterProbe.on(fenced())
            .withSchemas(SCHEMA)
            .run(as -> repository.saveAndFlush(new ProbeCharge(1, 400)));

    assertThat(report.fenced()).as(report.describe()).isTrue();
    log.info("Hibernate's SQL in the stale run: {}", report.staleRunSql());
    // what Hibernate sent through the wrapper while the stale holder ran
    assertThat(report.staleRunSql())
        .as("the SQL Hibernate sent, through %s", fenced().delegate())
        .anyMatch(sql -> sql.startsWith("insert into charges"));
  }

  @Test
  void updatingThroughTheJpaRepositoryIsFenced() {
    long[] id = new long[1];
    ProbeReport report =
        StaleWriterProbe.on(fenced())
            .withSchemas(SCHEMA)
            .run(
                as -> {
                  if (as == StaleWriterProbe.Holder.FIRST_HOLDER) {
                    // the table is strictly enforced: even the test's own rows need a lease
                    id[0] = repository.saveAndFlush(new ProbeCharge(1, 100)).id;
                    return;
                  }
                  ProbeCharge charge = repository.findById(id[0]).orElseThrow();
                  charge.amountCents += 1;
                  repository.saveAndFlush(charge);
                });

    assertThat(report.fenced()).as(report.describe()).isTrue();
    log.info("Hibernate's SQL in the stale run: {}", report.staleRunSql());
    assertThat(report.staleRunSql()).anyMatch(sql -> sql.startsWith("update charges"));
  }

  @Test
  void aRepositoryOnATableLeftUnfencedIsCaught() {
    long base = System.nanoTime() & 0xFFFFFFFL;
    ProbeReport report =
        StaleWriterProbe.on(fenced())
            .withSchemas(SCHEMA)
            .run(as -> customers.saveAndFlush(new ProbeCustomer(base + as.ordinal() + 2)));

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(SCHEMA + ".customers");
    assertThat(report.describe())
        .contains("(NOT fenced: no fence_token)")
        .contains("inserted {id=" + (base + 3) + "}")
        .contains("insert into customers (id) values (?)");
  }

  /** An entity on {@code customers}, which the application forgot to fence. */
  @Entity
  @Table(name = "customers")
  public static class ProbeCustomer {
    @Id Long id;

    protected ProbeCustomer() {}

    ProbeCustomer(long id) {
      this.id = id;
    }
  }

  /** Its repository. */
  public interface ProbeCustomerRepository extends JpaRepository<ProbeCustomer, Long> {}

  /** The entity: a row of {@code charges}; {@code fence_token} is the library's, not mapped. */
  @Entity
  @Table(name = "charges")
  public static class ProbeCharge {
    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    Long id;

    @Column(name = "customer_id")
    long customerId;

    @Column(name = "amount_cents")
    int amountCents;

    protected ProbeCharge() {}

    ProbeCharge(long customerId, int amountCents) {
      this.customerId = customerId;
      this.amountCents = amountCents;
    }
  }

  /** The repository. */
  public interface ProbeChargeRepository extends JpaRepository<ProbeCharge, Long> {}

  /** The application under test: leases in memory, the pool recorded under the wrapper. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableJpaRepositories(considerNestedRepositories = true, basePackageClasses = ProbeJpaApp.class)
  @org.springframework.boot.autoconfigure.domain.EntityScan(basePackageClasses = ProbeJpaApp.class)
  static class ProbeJpaApp {

    @Bean(destroyMethod = "close")
    LeaseManager leaseManager(DataSource dataSource) {
      return new FencedLeaseManager(
          InMemoryLeaseManager.create(), ((FencedDataSource) dataSource).fence());
    }

    /** The pool, recorded; the starter wraps this bean in its FencedDataSource. */
    @Bean(destroyMethod = "")
    DataSource dataSource() {
      com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
      config.setJdbcUrl(URL);
      config.setSchema(SCHEMA);
      config.setMaximumPoolSize(4);
      POOL = new com.zaxxer.hikari.HikariDataSource(config);
      return RecordingDataSource.wrap(POOL);
    }
  }
}
