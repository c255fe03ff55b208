package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.testing.RedisServers;
import dev.fencing.spring.billing.PlainRedisLockProvider;
import dev.fencing.spring.orm.Charges;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import dev.fencing.spring.orm.OrmBillingJob;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The incident in two Spring Boot application contexts (two instances, one PostgreSQL, one Redis),
 * with the charges written by a Spring Data JPA repository or a Spring Data JDBC repository in the
 * default mode: instance A's {@code @Fenced} job stalls before its third charge; meanwhile its lock
 * disappears from Redis (deleted, as after a Redis restart or an expiry A did not see) and instance
 * B bills the remaining customers. A resumes: its next charge receives {@link
 * StaleLeaseWriteException} (nothing else) and the job stops, in the documented pattern. Every
 * customer is charged once. Control: without fencing, under a plain Redis lock with the same story,
 * A charges B's customers again.
 */
class TwoContextRepositoryTest {

  private static final int CUSTOMERS = 6;
  private static final int CHARGES_BEFORE_STALL = 2;
  private static final String RESOURCE = "two-context-repositories";

  private final String schema = "spring_repos_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
  private RedissonClient redisson;

  @BeforeEach
  void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    redisson = RedisServers.connectShared();
  }

  @AfterEach
  void close() throws SQLException {
    contexts.forEach(ConfigurableApplicationContext::close);
    redisson.shutdown();
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Charges.Style.class,
      names = {"JPA_REPOSITORY", "SPRING_DATA_JDBC"})
  void theStaleInstanceReceivesOnlyStaleLeaseWriteExceptionAndStops(Charges.Style style)
      throws Exception {
    Stall stall = new Stall();
    ConfigurableApplicationContext a = start(true, stall);
    ConfigurableApplicationContext b = start(true, point -> {});
    seedCustomers();

    CompletableFuture<OrmBillingJob.Run> runA =
        CompletableFuture.supplyAsync(() -> a.getBean(OrmBillingJob.class).bill(style, all()));
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).as("A stalled").isTrue();
    RedissonClient redis = a.getBean(RedissonClient.class);
    assertThat(redis.getBucket(keyPrefix + "{" + RESOURCE + "}:lock").delete())
        .as("A's lock was in Redis")
        .isTrue();
    OrmBillingJob.Run runB = b.getBean(OrmBillingJob.class).bill(style, remaining());
    stall.resume.countDown();
    OrmBillingJob.Run ranA = runA.get(60, TimeUnit.SECONDS);

    String label = "[two-context, " + style + ", fencing on]";
    System.out.println(label + " A: " + ranA + "; B: " + runB);
    assertThat(ranA.stoppedAt())
        .as("A stopped at StaleLeaseWriteException (any other exception fails the run)")
        .isNotNull();
    System.out.println(label + " A refused by the " + ranA.stoppedAt().refusedBy());
    assertThat(ranA.charged()).isEqualTo(CHARGES_BEFORE_STALL);
    assertThat(runB.stoppedAt()).isNull();
    assertThat(runB.charged()).isEqualTo(CUSTOMERS - CHARGES_BEFORE_STALL);
    Map<Long, Integer> perCustomer = chargesPerCustomer(style);
    System.out.println(label + " charges per customer: " + perCustomer);
    assertThat(perCustomer).hasSize(CUSTOMERS).allSatisfy((c, n) -> assertThat(n).isOne());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Charges.Style.class,
      names = {"JPA_REPOSITORY", "SPRING_DATA_JDBC"})
  void withoutFencingTheStaleInstanceChargesAgain(Charges.Style style) throws Exception {
    Stall stall = new Stall();
    ConfigurableApplicationContext a = start(false, stall);
    ConfigurableApplicationContext b = start(false, point -> {});
    seedCustomers();
    RLock lockOfA = a.getBean(RedissonClient.class).getLock(keyPrefix + "plain");
    RLock lockOfB = b.getBean(RedissonClient.class).getLock(keyPrefix + "plain");

    CompletableFuture<OrmBillingJob.Run> runA =
        CompletableFuture.supplyAsync(
            () -> underPlainLock(lockOfA, () -> a.getBean(OrmBillingJob.class).bill(style, all())));
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).as("A stalled").isTrue();
    lockOfA.forceUnlock(); // the lock disappears, as in the fenced run
    OrmBillingJob.Run runB =
        underPlainLock(lockOfB, () -> b.getBean(OrmBillingJob.class).bill(style, remaining()));
    stall.resume.countDown();
    OrmBillingJob.Run ranA = runA.get(60, TimeUnit.SECONDS);

    Map<Long, Integer> perCustomer = chargesPerCustomer(style);
    System.out.println(
        "[two-context, "
            + style
            + ", fencing off] A: "
            + ranA
            + "; B: "
            + runB
            + "; charges per customer: "
            + perCustomer);
    assertThat(ranA.stoppedAt()).isNull();
    assertThat(perCustomer.values().stream().filter(n -> n > 1).count())
        .as("customers charged twice")
        .isEqualTo(CUSTOMERS - CHARGES_BEFORE_STALL);
  }

  private static OrmBillingJob.Run underPlainLock(
      RLock lock, java.util.function.Supplier<OrmBillingJob.Run> job) {
    try {
      assertThat(lock.tryLock(20, 30, TimeUnit.SECONDS)).as("plain lock acquired").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    try {
      return job.get();
    } finally {
      if (lock.isHeldByCurrentThread()) {
        lock.unlock();
      }
    }
  }

  private static List<Long> all() {
    return LongStream.rangeClosed(1, CUSTOMERS).boxed().toList();
  }

  private static List<Long> remaining() {
    return LongStream.rangeClosed(CHARGES_BEFORE_STALL + 1, CUSTOMERS).boxed().toList();
  }

  private ConfigurableApplicationContext start(boolean fencing, LossHook hook) {
    String tables = String.join(",", schema + ".jpa_charges", schema + ".jdbc_charges");
    ConfigurableApplicationContext context =
        new SpringApplicationBuilder(OrmApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> {
                  c.getBeanFactory().registerSingleton("lossHook", hook);
                  if (!fencing) { // OrmApp enables ShedLock, which needs a LockProvider
                    c.getBeanFactory()
                        .registerSingleton(
                            "plainLockProvider",
                            new PlainRedisLockProvider(redisson, keyPrefix + "plain-shedlock:"));
                  }
                })
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/orm",
                "spring.jpa.open-in-view=false",
                "fencing.enabled=" + fencing,
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.tables=" + tables,
                "orm.resource=" + RESOURCE)
            .run();
    contexts.add(context);
    return context;
  }

  private void seedCustomers() throws SQLException {
    TestDatabase.execute(
        "INSERT INTO \"" + schema + "\".customers SELECT generate_series(1, " + CUSTOMERS + ")");
  }

  private Map<Long, Integer> chargesPerCustomer(Charges.Style style) throws SQLException {
    String table = style == Charges.Style.JPA_REPOSITORY ? "jpa_charges" : "jdbc_charges";
    Map<Long, Integer> perCustomer = new LinkedHashMap<>();
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT customer_id, count(*) FROM \""
                    + schema
                    + "\"."
                    + table
                    + " GROUP BY customer_id ORDER BY customer_id")) {
      while (rs.next()) {
        perCustomer.put(rs.getLong(1), rs.getInt(2));
      }
    }
    return perCustomer;
  }

  /** Stalls A before its third charge's transaction until resumed. */
  private static final class Stall implements LossHook {
    final CountDownLatch stalled = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    private final AtomicInteger charges = new AtomicInteger();

    @Override
    public void at(Point point) {
      if (point != Point.BEFORE_TRANSACTION || charges.getAndIncrement() != CHARGES_BEFORE_STALL) {
        return;
      }
      stalled.countDown();
      try {
        if (!resume.await(60, TimeUnit.SECONDS)) {
          throw new AssertionError("never resumed");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
