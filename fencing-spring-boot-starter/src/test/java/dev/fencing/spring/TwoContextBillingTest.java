package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.spring.billing.BillingApp;
import dev.fencing.spring.billing.BillingJob;
import dev.fencing.spring.billing.ChargeHook;
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
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The incident, in two Spring Boot application contexts sharing PostgreSQL and Redis: instance A
 * runs the nightly billing job, stalls after its first charges for longer than its 2 s lease;
 * instance B takes over and bills everyone left; A resumes. With the starter, A's next write is
 * rejected as a {@link StaleLeaseWriteException} and rolled back: every customer is charged once.
 * Without it (a plain Redis lock with the same lease time), A charges again.
 */
class TwoContextBillingTest {

  private static final int CUSTOMERS = 10;
  private static final int CHARGES_BEFORE_STALL = 3;

  private final String schema = "spring_billing_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

  @BeforeEach
  void createSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @AfterEach
  void close() throws SQLException {
    contexts.forEach(ConfigurableApplicationContext::close);
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @Test
  void staleInstanceIsRejectedAndEveryCustomerIsChargedOnce() throws Exception {
    Stall stall = new Stall();
    ConfigurableApplicationContext a = start(true, stall.hook());
    ConfigurableApplicationContext b = start(true, id -> {});
    seedCustomers();

    CompletableFuture<Throwable> runA =
        CompletableFuture.supplyAsync(
            () -> failureOf(() -> a.getBean(BillingJob.class).billNightly()));
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).as("A stalled").isTrue();
    b.getBean(BillingJob.class).billNightly(); // waits for A's lease to expire, then bills
    stall.resume.countDown();
    Throwable failureOfA = runA.get(30, TimeUnit.SECONDS);

    assertThat(failureOfA)
        .as("A's write after its lease expired: refused in the JVM, before reaching the database")
        .isInstanceOf(LeaseLostException.class);
    System.out.println("[two-context, fenced] A failed with: " + failureOfA);
    Map<Long, Integer> chargesByToken = chargesByToken();
    System.out.println(
        "[two-context, fenced] charges by fence token: "
            + chargesByToken
            + ", charges per customer: "
            + chargesPerCustomer());
    assertThat(chargesPerCustomer()).hasSize(CUSTOMERS).allSatisfy((c, n) -> assertThat(n).isOne());
    assertThat(chargesByToken.values())
        .containsExactly(CHARGES_BEFORE_STALL, CUSTOMERS - CHARGES_BEFORE_STALL);
  }

  @Test
  void staleInstanceThatStillBelievesItHoldsTheLeaseIsRejectedByTheDatabase() throws Exception {
    Stall stall = new Stall();
    RedissonClient redisson = RedisServers.connectShared();
    try (LeaseManager believer =
        new BelievedHeldLeaseManager(
            RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(keyPrefix)))) {
      ConfigurableApplicationContext a = start(true, stall.hook(), believer);
      ConfigurableApplicationContext b = start(true, id -> {}, null);
      seedCustomers();

      CompletableFuture<Throwable> runA =
          CompletableFuture.supplyAsync(
              () -> failureOf(() -> a.getBean(BillingJob.class).billNightly()));
      assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).as("A stalled").isTrue();
      b.getBean(BillingJob.class).billNightly();
      stall.resume.countDown();
      Throwable failureOfA = runA.get(30, TimeUnit.SECONDS);

      System.out.println("[two-context, believed held] A failed with: " + failureOfA);
      assertThat(failureOfA).isInstanceOf(StaleLeaseWriteException.class);
      StaleTokenException stale =
          ((StaleLeaseWriteException) failureOfA).staleToken().orElseThrow();
      assertThat(stale.getMessage()).doesNotContain("before reaching the database");
      assertThat(stale.attemptedToken()).isLessThan(stale.currentToken());
      assertThat(chargesPerCustomer())
          .hasSize(CUSTOMERS)
          .allSatisfy((c, n) -> assertThat(n).isOne());
    } finally {
      redisson.shutdown();
    }
  }

  @Test
  void withoutFencingTheStaleInstanceChargesAgain() throws Exception {
    Stall stall = new Stall();
    ConfigurableApplicationContext a = start(false, stall.hook());
    ConfigurableApplicationContext b = start(false, id -> {});
    seedCustomers();

    CompletableFuture<Throwable> runA =
        CompletableFuture.supplyAsync(() -> failureOf(() -> underPlainLock(a)));
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS)).as("A stalled").isTrue();
    underPlainLock(b);
    stall.resume.countDown();
    assertThat(runA.get(30, TimeUnit.SECONDS)).as("A's failure").isNull();

    Map<Long, Integer> perCustomer = chargesPerCustomer();
    System.out.println("[two-context, plain lock] charges per customer: " + perCustomer);
    assertThat(perCustomer.values().stream().filter(n -> n > 1).count())
        .as("customers charged twice")
        .isEqualTo(CUSTOMERS - CHARGES_BEFORE_STALL);
  }

  /** Runs the job under a plain Redis lock with the same 2 s lease time and 10 s wait. */
  private void underPlainLock(ConfigurableApplicationContext context) {
    RLock lock = context.getBean(RedissonClient.class).getLock(keyPrefix + "plain-billing");
    try {
      assertThat(lock.tryLock(10, 2, TimeUnit.SECONDS)).as("plain lock acquired").isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    try {
      context.getBean(BillingJob.class).billNightly();
    } finally {
      if (lock.isHeldByCurrentThread()) {
        lock.unlock();
      }
    }
  }

  /** Stalls the holder inside its fourth charge's transaction until released. */
  private static final class Stall {
    final CountDownLatch stalled = new CountDownLatch(1);
    final CountDownLatch resume = new CountDownLatch(1);
    final AtomicInteger charges = new AtomicInteger();

    ChargeHook hook() {
      return id -> {
        if (charges.getAndIncrement() == CHARGES_BEFORE_STALL) {
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
      };
    }
  }

  private static Throwable failureOf(Runnable work) {
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try {
      work.run();
    } catch (Throwable t) {
      failure.set(t);
    }
    return failure.get();
  }

  private ConfigurableApplicationContext start(boolean fencing, ChargeHook hook) {
    return start(fencing, hook, null);
  }

  private ConfigurableApplicationContext start(
      boolean fencing, ChargeHook hook, LeaseManager ownLeaseManager) {
    ConfigurableApplicationContext context =
        new SpringApplicationBuilder(BillingApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> {
                  c.getBeanFactory().registerSingleton("chargeHook", hook);
                  if (ownLeaseManager != null) {
                    c.getBeanFactory().registerSingleton("ownLeaseManager", ownLeaseManager);
                  }
                })
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/billing",
                "fencing.enabled=" + fencing,
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.enforce=" + schema + ".charges",
                "billing.resource=billing-nightly",
                "billing.lease-time=2s",
                "billing.max-wait=10s")
            .run();
    contexts.add(context);
    return context;
  }

  private void seedCustomers() throws SQLException {
    TestDatabase.execute(
        "INSERT INTO \"" + schema + "\".customers SELECT generate_series(1, " + CUSTOMERS + ")");
  }

  private Map<Long, Integer> chargesPerCustomer() throws SQLException {
    return counts(
        "SELECT customer_id, count(*) FROM \""
            + schema
            + "\".charges GROUP BY customer_id ORDER BY customer_id");
  }

  private Map<Long, Integer> chargesByToken() throws SQLException {
    return counts(
        "SELECT fence_token, count(*) FROM \""
            + schema
            + "\".charges GROUP BY fence_token ORDER BY fence_token");
  }

  private static Map<Long, Integer> counts(String sql) throws SQLException {
    Map<Long, Integer> counts = new LinkedHashMap<>();
    try (Connection c = TestDatabase.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        counts.put(rs.getLong(1), rs.getInt(2));
      }
    }
    return counts;
  }
}
