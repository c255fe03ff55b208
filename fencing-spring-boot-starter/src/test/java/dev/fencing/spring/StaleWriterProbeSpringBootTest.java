package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.testing.InMemoryLeaseManager;
import dev.fencing.testing.ProbeReport;
import dev.fencing.testing.StaleWriterProbe;
import java.sql.SQLException;
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
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A {@code @SpringBootTest} of the starter with a {@code JdbcTemplate} DAO under the stale-writer
 * probe: the application's leases come from an in-memory manager registered in the fence ({@link
 * InMemoryFencingLeases}, imported by the test), so no Redis is needed; the probe gets the
 * application's {@link FencedDataSource} bean. The JdbcTemplate's refusal arrives as Spring's
 * {@link StaleLeaseWriteException}.
 */
@SpringBootTest(classes = StaleWriterProbeSpringBootTest.ProbeApp.class)
class StaleWriterProbeSpringBootTest {

  private static final String SCHEMA =
      "spring_probe_" + UUID.randomUUID().toString().substring(0, 8);
  private static final String FENCE_SCHEMA = SCHEMA + "_fence";

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry registry) {
    registry.add("spring.datasource.url", () -> TestDatabase.URL);
    registry.add("spring.datasource.hikari.schema", () -> SCHEMA);
    registry.add("spring.datasource.hikari.maximum-pool-size", () -> "4");
    registry.add("spring.flyway.schemas", () -> SCHEMA);
    registry.add("spring.flyway.locations", () -> "classpath:db/billing");
    registry.add("fencing.schema", () -> FENCE_SCHEMA);
    registry.add("fencing.migrations.tables", () -> SCHEMA + ".charges");
  }

  @AfterAll
  static void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(SCHEMA, FENCE_SCHEMA);
  }

  @Autowired DataSource dataSource;
  @Autowired ChargeDao charges;
  @Autowired ChargeService service;

  @BeforeEach
  void customer() {
    new JdbcTemplate(fenced().delegate())
        .update("INSERT INTO customers (id) VALUES (1) ON CONFLICT DO NOTHING");
  }

  private FencedDataSource fenced() {
    assertThat(dataSource).isInstanceOf(FencedDataSource.class);
    return (FencedDataSource) dataSource;
  }

  @Test
  void theJdbcTemplateDaoIsFenced() {
    ProbeReport report =
        StaleWriterProbe.on(fenced()).withSchemas(SCHEMA).run(as -> charges.charge(1, 500));

    assertThat(report.fenced()).as(report.describe()).isTrue();
    assertThat(report.staleRunThrew()).containsInstanceOf(StaleLeaseWriteException.class);
  }

  @Test
  void aTransactionalServiceOverTheDaoIsFenced() {
    ProbeReport report =
        StaleWriterProbe.on(fenced()).withSchemas(SCHEMA).run(as -> service.chargeTwice(1, 300));

    assertThat(report.fenced()).as(report.describe()).isTrue();
  }

  @Test
  void theSameDaoOnThePoolUnderTheWrapperIsCaught() {
    ChargeDao unfenced = new ChargeDao(new JdbcTemplate(fenced().delegate()));

    ProbeReport report =
        StaleWriterProbe.on(fenced()).withSchemas(SCHEMA).run(as -> unfenced.charge(1, 700));

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(SCHEMA + ".charges");
    assertThat(report.describe()).contains("amount_cents=700").contains("How to fence it");
  }

  /** The DAO: plain SQL through the application's JdbcTemplate, guarded by the rewriter. */
  @Repository
  static class ChargeDao {
    private final JdbcTemplate jdbc;

    ChargeDao(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    void charge(long customerId, int amountCents) {
      jdbc.update(
          "INSERT INTO charges (customer_id, amount_cents) VALUES (?, ?)", customerId, amountCents);
    }
  }

  /** Two charges in one transaction: the stale holder's first insert is refused, both roll back. */
  @org.springframework.stereotype.Service
  static class ChargeService {
    private final ChargeDao charges;

    ChargeService(ChargeDao charges) {
      this.charges = charges;
    }

    @org.springframework.transaction.annotation.Transactional
    public void chargeTwice(long customerId, int amountCents) {
      charges.charge(customerId, amountCents);
      charges.charge(customerId, amountCents);
    }
  }

  /** The application under test. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({InMemoryFencingLeases.class, ChargeDao.class, ChargeService.class})
  static class ProbeApp {}

  /**
   * Leases for a Spring Boot test without Redis: an {@link InMemoryLeaseManager} registered in the
   * application's fence, as the application's {@link LeaseManager} (the starter then creates no
   * Redis manager).
   */
  static class InMemoryFencingLeases {
    @Bean(destroyMethod = "close")
    LeaseManager leaseManager(DataSource dataSource) {
      return new FencedLeaseManager(
          InMemoryLeaseManager.create(), ((FencedDataSource) dataSource).fence());
    }
  }
}
