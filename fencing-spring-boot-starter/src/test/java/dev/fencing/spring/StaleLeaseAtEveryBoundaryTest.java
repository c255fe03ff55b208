package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.micrometer.FencingMetrics;
import dev.fencing.spring.billing.PlainRedisLockProvider;
import dev.fencing.spring.orm.Charges;
import dev.fencing.spring.orm.ControlledLeaseManager;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import dev.fencing.spring.orm.OrmBillingJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.redisson.api.RedissonClient;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * One exception for "no longer the holder", whatever the style and wherever the refusal happens: a
 * {@code @Fenced} job in the documented pattern (catch {@link StaleLeaseWriteException}, stop)
 * charges customers with JdbcTemplate, a Spring Data JPA repository, Hibernate's flush at commit,
 * an explicit {@code EntityManager.flush}, or a Spring Data JDBC repository, all auto-configured by
 * Boot in the default mode. After its second charge the lease is lost and a successor registers,
 * before the next transaction begins, inside it before the write, or after the write was handed to
 * Hibernate (flushed at commit). The JVM either knows (the lease is marked lost) or believes it
 * still holds the lease (only the database can refuse). Every time the job receives {@link
 * StaleLeaseWriteException} at its next charge and stops, with two charges written.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StaleLeaseAtEveryBoundaryTest {

  private static final int CHARGES_BEFORE_LOSS = 2;
  private static final List<Long> CUSTOMERS = List.of(1L, 2L, 3L, 4L);
  private static final String RESOURCE = "orm-billing";

  /** Where the lease is lost. */
  enum Boundary {
    BEGIN(LossHook.Point.BEFORE_TRANSACTION),
    STATEMENT(LossHook.Point.IN_TRANSACTION),
    COMMIT(LossHook.Point.AFTER_WRITE);

    final LossHook.Point point;

    Boundary(LossHook.Point point) {
      this.point = point;
    }
  }

  /** Who refuses: the JVM that knows the lease is lost, or the database. */
  enum Refusal {
    JVM,
    DATABASE
  }

  private final String schema = "spring_orm_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private final ScriptedLoss loss = new ScriptedLoss();
  private ConfigurableApplicationContext context;
  private ControlledLeaseManager leases;
  private RedissonClient redisson;
  private LeaseManager successor;

  @BeforeAll
  void start() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    redisson = dev.fencing.core.testing.RedisServers.connectShared();
    leases =
        new ControlledLeaseManager(
            RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(keyPrefix)));
    context = start(true);
    successor =
        new FencedLeaseManager(
            RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(keyPrefix)),
            FencingAutoConfiguration.fenced(context.getBean(DataSource.class)).fence());
    TestDatabase.execute(
        "INSERT INTO \""
            + schema
            + "\".customers SELECT generate_series(1, "
            + CUSTOMERS.size()
            + ")");
  }

  private ConfigurableApplicationContext start(boolean fencing) {
    String tables =
        String.join(
            ",",
            schema + ".charges",
            schema + ".jpa_charges",
            schema + ".jpa_invoices",
            schema + ".jdbc_charges");
    return new SpringApplicationBuilder(OrmApp.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .initializers(
            c -> {
              c.getBeanFactory().registerSingleton("lossHook", loss);
              if (fencing) {
                c.getBeanFactory().registerSingleton("ownLeaseManager", leases);
              } else {
                c.getBeanFactory()
                    .registerSingleton(
                        "plainLockProvider",
                        new PlainRedisLockProvider(redisson, keyPrefix + "plain-shedlock:"));
              }
            })
        .properties(
            "spring.datasource.url=" + TestDatabase.URL,
            "spring.datasource.hikari.schema=" + schema,
            "spring.datasource.hikari.maximum-pool-size=6",
            "spring.flyway.schemas=" + schema,
            "spring.flyway.locations=classpath:db/orm",
            "spring.jpa.open-in-view=false",
            "fencing.enabled=" + fencing,
            "fencing.schema=" + fenceSchema,
            "fencing.migrations.tables=" + tables,
            "orm.resource=" + RESOURCE)
        .run();
  }

  @AfterAll
  void stop() throws SQLException {
    if (successor != null) {
      successor.close();
    }
    if (context != null) {
      context.close();
    }
    leases.close();
    redisson.shutdown();
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

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (Charges.Style style : Charges.Style.values()) {
      for (Refusal refusal : Refusal.values()) {
        cases.add(Arguments.of(style, Boundary.BEGIN, refusal));
        cases.add(Arguments.of(style, Boundary.STATEMENT, refusal));
        if (style == Charges.Style.JPA_FLUSH_AT_COMMIT) {
          cases.add(Arguments.of(style, Boundary.COMMIT, refusal));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}, lease lost at {1}, refused by the {2}")
  @MethodSource("cases")
  void theStaleJobReceivesStaleLeaseWriteExceptionAndStops(
      Charges.Style style, Boundary boundary, Refusal refusal) throws SQLException {
    leases.believeHeld(refusal == Refusal.DATABASE);
    loss.script(boundary.point);
    double jvmBefore = rejected("jvm");
    double databaseBefore = rejected("database");
    OrmBillingJob.Run run;
    try {
      run = context.getBean(OrmBillingJob.class).bill(style, CUSTOMERS);
    } catch (RuntimeException e) {
      System.out.println(
          "[orm " + style + ", " + boundary + ", " + refusal + "] the job received " + e);
      throw new AssertionError("the job did not receive StaleLeaseWriteException but " + e, e);
    }
    StaleLeaseWriteException stale = run.stoppedAt();
    System.out.println(
        "[orm " + style + ", " + boundary + ", " + refusal + "] the job stopped at " + stale);
    assertThat(loss.lost()).as("the lease was lost").isNotNull();
    assertThat(stale)
        .as("the job stopped at a StaleLeaseWriteException")
        .isNotNull()
        .isInstanceOf(NonTransientDataAccessException.class);
    assertThat(run.charged()).isEqualTo(CHARGES_BEFORE_LOSS);
    assertThat(rowsOf(style)).as("rows written").isEqualTo(CHARGES_BEFORE_LOSS);
    assertThat(stale.resource()).contains(RESOURCE);
    assertThat(stale.attemptedToken()).hasValue(loss.lost().token().value());
    assertThat(stale.refusedBy())
        .isEqualTo(
            refusal == Refusal.JVM
                ? StaleLeaseWriteException.RefusedBy.JVM
                : StaleLeaseWriteException.RefusedBy.DATABASE);
    assertThat(rejected("jvm") - jvmBefore)
        .as("fencing.writes.rejected{where=jvm}")
        .isEqualTo(refusal == Refusal.JVM ? 1 : 0);
    assertThat(rejected("database") - databaseBefore)
        .as("fencing.writes.rejected{where=database}")
        .isEqualTo(refusal == Refusal.DATABASE ? 1 : 0);
    if (refusal == Refusal.DATABASE) {
      assertThat(stale.currentToken()).hasValue(loss.successorToken());
      assertThat(stale.staleToken()).isPresent();
    } else {
      assertThat(stale.leaseLost()).isPresent();
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Charges.Style.class)
  void withoutFencingTheJobNeverHearsOfTheLossAndWritesEveryCharge(Charges.Style style)
      throws SQLException {
    loss.script(Boundary.STATEMENT.point);
    try (ConfigurableApplicationContext unfenced = start(false)) {
      OrmBillingJob.Run run = unfenced.getBean(OrmBillingJob.class).bill(style, CUSTOMERS);
      System.out.println("[orm " + style + ", fencing off] the job ran: " + run);
      assertThat(loss.passedUnfenced()).as("the job passed the point of the loss").isTrue();
      assertThat(run.stoppedAt()).isNull();
      assertThat(rowsOf(style))
          .as("the stale instance's writes after the loss landed")
          .isEqualTo(CUSTOMERS.size());
    }
  }

  @Test
  void theMetersExistAtZeroFromTheStart() {
    try (ConfigurableApplicationContext fresh = start(true)) {
      MeterRegistry registry = fresh.getBean(MeterRegistry.class);
      for (String where : List.of("jvm", "database")) {
        assertThat(registry.find(FencingMetrics.REJECTED).tag("where", where).counter())
            .as("fencing.writes.rejected{where=%s}", where)
            .isNotNull()
            .satisfies(c -> assertThat(c.count()).isZero());
      }
      for (LossReason reason : LossReason.values()) {
        String tag = reason.name().toLowerCase(java.util.Locale.ROOT);
        assertThat(registry.find(FencingMetrics.LOST).tag("reason", tag).counter())
            .as("fencing.lease.lost{reason=%s}", tag)
            .isNotNull();
      }
      assertThat(registry.find(FencingMetrics.ACTIVE).gauge()).isNotNull();
    }
  }

  private double rejected(String where) {
    return context
        .getBean(MeterRegistry.class)
        .find(FencingMetrics.REJECTED)
        .tag("where", where)
        .counters()
        .stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  private int rowsOf(Charges.Style style) throws SQLException {
    String table =
        switch (style) {
          case JDBC_TEMPLATE -> "charges";
          case JPA_REPOSITORY -> "jpa_charges";
          case JPA_FLUSH_AT_COMMIT, ENTITY_MANAGER_FLUSH -> "jpa_invoices";
          case SPRING_DATA_JDBC -> "jdbc_charges";
        };
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM \"" + schema + "\"." + table)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * Ends the job's lease at the scripted point of its third charge: marks it lost (the Redis lock
   * is deleted) and lets a successor acquire and register.
   */
  private final class ScriptedLoss implements LossHook {
    private final AtomicInteger charge = new AtomicInteger();
    private volatile Point point;
    private volatile Lease lost;
    private volatile long successorToken;
    private volatile boolean passedUnfenced;

    void script(Point point) {
      this.point = point;
      this.lost = null;
      this.passedUnfenced = false;
      charge.set(0);
    }

    Lease lost() {
      return lost;
    }

    boolean passedUnfenced() {
      return passedUnfenced;
    }

    long successorToken() {
      return successorToken;
    }

    @Override
    public void at(Point at) {
      if (at == Point.BEFORE_TRANSACTION) {
        charge.incrementAndGet();
      }
      if (at != point || charge.get() != CHARGES_BEFORE_LOSS + 1 || lost != null) {
        return;
      }
      if (Fencing.currentLease().isEmpty()) {
        passedUnfenced = true; // fencing off: no lease to lose
        return;
      }
      Lease lease = Fencing.currentLease().orElseThrow();
      lease.markLost(LossReason.SUPERSEDED); // deletes the Redis lock
      try (Lease next =
          successor.acquire(
              RESOURCE,
              LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
                  .withMaxWait(Duration.ofSeconds(10)))) {
        successorToken = next.token().value();
      }
      lost = lease;
    }
  }
}
