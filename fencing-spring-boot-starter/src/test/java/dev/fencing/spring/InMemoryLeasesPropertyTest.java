package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.testing.ProbeReport;
import dev.fencing.testing.StaleWriterProbe;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.stereotype.Service;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code fencing.test.in-memory-leases=true} in a {@code @SpringBootTest} of the starter with no
 * Redis: the lease manager is a fenced in-memory one, and the {@link StaleWriterProbe} bean proves
 * a {@code JdbcTemplate} DAO fenced, and catches the same DAO on the pool under the wrapper.
 */
@SpringBootTest(
    classes = InMemoryLeasesPropertyTest.App.class,
    properties = "fencing.test.in-memory-leases=true")
class InMemoryLeasesPropertyTest {

  private static final String SCHEMA =
      "spring_inmem_" + UUID.randomUUID().toString().substring(0, 8);
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

  @Autowired ApplicationContext context;
  @Autowired DataSource dataSource;
  @Autowired StaleWriterProbe probe;
  @Autowired ChargeDao charges;
  @Autowired FencedCharges fencedCharges;

  @BeforeEach
  void customer() {
    new JdbcTemplate(raw()).update("INSERT INTO customers (id) VALUES (1) ON CONFLICT DO NOTHING");
  }

  private DataSource raw() {
    assertThat(dataSource).isInstanceOf(FencedDataSource.class);
    return ((FencedDataSource) dataSource).delegate();
  }

  @Test
  void theLeaseManagerIsFencedAndInMemoryWithoutARedissonClient() {
    assertThat(context.getBeansOfType(RedissonClient.class)).isEmpty();
    assertThat(context.getBeansOfType(LeaseManager.class).values())
        .singleElement()
        .isInstanceOf(FencedLeaseManager.class);
  }

  @Test
  void theProbeBeanPassesTheFencedDao() {
    probe.check(as -> charges.charge(1, 500));
  }

  @Test
  void theProbeBeanCatchesTheSameDaoOnThePoolUnderTheWrapper() {
    ChargeDao unfenced = new ChargeDao(new JdbcTemplate(raw()));

    ProbeReport report = probe.run(as -> unfenced.charge(1, 700));

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(SCHEMA + ".charges");
    assertThatThrownBy(() -> probe.check(as -> unfenced.charge(1, 700)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("amount_cents=700")
        .hasMessageContaining("How to fence it");
  }

  @Test
  void fencedMethodsTakeTheirLeasesFromTheInMemoryManager() {
    int before = count();

    fencedCharges.charge(1, 900);

    assertThat(count()).isEqualTo(before + 1);
  }

  private int count() {
    return new JdbcTemplate(raw()).queryForObject("SELECT count(*) FROM charges", Integer.class);
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

  /** A {@link Fenced} method over the DAO: its lease comes from the in-memory manager. */
  @Service
  static class FencedCharges {
    private final ChargeDao charges;

    FencedCharges(ChargeDao charges) {
      this.charges = charges;
    }

    @Fenced(resource = "in-memory-billing")
    public void charge(long customerId, int amountCents) {
      charges.charge(customerId, amountCents);
    }
  }

  /** The application under test: no lease configuration of its own, no Redis. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({ChargeDao.class, FencedCharges.class})
  static class App {}
}
