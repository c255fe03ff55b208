package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.micrometer.FencingMetrics;
import dev.fencing.spring.billing.BillingApp;
import dev.fencing.spring.billing.BillingJob;
import dev.fencing.spring.billing.ChargeHook;
import dev.fencing.spring.billing.PlainRedisLockProvider;
import dev.fencing.spring.billing.ShedLockBillingJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * The incident, in two Spring Boot application contexts sharing PostgreSQL and Redis, each with its
 * own meter registry: instance A runs the nightly billing job and stalls after its first charges
 * for longer than its 5 s lease; instance B takes over and bills everyone left; A resumes.
 *
 * <ul>
 *   <li>A's fourth write is held on the wire (a TCP proxy between A and PostgreSQL) after it passed
 *       every check in A's JVM: the database rejects it, A's {@code JdbcTemplate} throws {@link
 *       StaleLeaseWriteException}, its transaction rolls back, and A's meters show one lease loss
 *       and one rejected write. The same with {@code @SchedulerLock} on the auto-configured
 *       ShedLock provider. Without fencing ({@code fencing.enabled=false}, a plain Redis lock with
 *       the same lease time), A charges again.
 *   <li>A stalls in the job, before its write: the lease is known lost in A's JVM, which refuses
 *       the write: {@link StaleLeaseWriteException} again, refused by the JVM.
 *   <li>A's own lease manager keeps believing it holds the lease: the database rejects the write.
 * </ul>
 */
class TwoContextBillingTest {

  private static final int CUSTOMERS = 10;
  private static final int CHARGES_BEFORE_STALL = 3;

  /**
   * The lease time (and {@code lockAtMostFor}): long enough for a context's first fenced statements
   * (class loading, the plain-SQL screen's first look at the fence) on a loaded two-core machine,
   * where 2 s proved too short.
   */
  private static final int LEASE_SECONDS = 5;

  private static final int MAX_WAIT_SECONDS = 20;

  /** How the job is locked: {@code @Fenced}, or {@code @SchedulerLock}. */
  private enum Locking {
    FENCED("@Fenced"),
    SHEDLOCK("@SchedulerLock");

    final String annotation;

    Locking(String annotation) {
      this.annotation = annotation;
    }
  }

  private final String schema = "spring_billing_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
  private final List<HoldingProxy> proxies = new ArrayList<>();

  @BeforeEach
  void createSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @AfterEach
  void close() throws SQLException {
    contexts.forEach(ConfigurableApplicationContext::close);
    proxies.forEach(HoldingProxy::close);
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @Test
  void aWriteDelayedPastTheLeaseIsRejectedAndRolledBackAndTheMetersShowIt() throws Exception {
    delayedWriteIsRejected(Locking.FENCED);
  }

  @Test
  void withShedLockAWriteDelayedPastTheLockIsRejectedAndRolledBackAndTheMetersShowIt()
      throws Exception {
    delayedWriteIsRejected(Locking.SHEDLOCK);
  }

  @Test
  void withoutFencingTheDelayedWriteLandsAndCustomersAreChargedTwice() throws Exception {
    delayedWriteDoubleCharges(Locking.FENCED);
  }

  @Test
  void withoutFencingTheShedLockJobsDelayedWriteLandsAndCustomersAreChargedTwice()
      throws Exception {
    delayedWriteDoubleCharges(Locking.SHEDLOCK);
  }

  private void delayedWriteIsRejected(Locking locking) throws Exception {
    String label = "[two-context, " + locking.annotation + ", fencing on]";
    Incident incident = delayedWriteIncident(locking, true);

    Throwable failureOfA = incident.failureOfA();
    System.out.println(label + " A failed with: " + failureOfA);
    assertThat(failureOfA)
        .as("A's delayed write: rejected by the database, translated for Spring callers")
        .isInstanceOf(StaleLeaseWriteException.class)
        .isInstanceOf(NonTransientDataAccessException.class);
    StaleTokenException stale = ((StaleLeaseWriteException) failureOfA).staleToken().orElseThrow();
    assertThat(stale.attemptedToken()).isLessThan(stale.currentToken());

    Map<Long, Integer> perCustomer = chargesPerCustomer();
    Map<Long, Integer> byToken = chargesByToken();
    System.out.println(
        label + " charges per customer: " + perCustomer + ", charges by fence token: " + byToken);
    assertThat(perCustomer).hasSize(CUSTOMERS).allSatisfy((c, n) -> assertThat(n).isOne());
    assertThat(byToken)
        .as("A's rejected charge rolled back: A keeps its first charges, B has all the others")
        .containsExactly(
            entry(stale.attemptedToken(), CHARGES_BEFORE_STALL),
            entry(stale.currentToken(), CUSTOMERS - CHARGES_BEFORE_STALL));

    Meters a = new Meters(incident.a());
    Meters b = new Meters(incident.b());
    System.out.println(label + " meters of A: " + a + "; meters of B: " + b);
    assertThat(a.lost()).as("A: leases lost").isEqualTo(1);
    assertThat(a.lost("expired")).as("A: leases lost, expired").isEqualTo(1);
    assertThat(a.rejected()).as("A: writes rejected").isEqualTo(1);
    assertThat(a.rejected("database")).as("A: writes rejected by the database").isEqualTo(1);
    assertThat(a.registered()).as("A: registrations").isEqualTo(1);
    assertThat(a.acquired()).as("A: acquisitions").isEqualTo(1);
    assertThat(a.active()).as("A: leases held now").isZero();
    assertThat(b.lost()).as("B: leases lost").isZero();
    assertThat(b.rejected()).as("B: writes rejected").isZero();
    assertThat(b.registered()).as("B: registrations").isEqualTo(1);
    assertThat(b.acquired()).as("B: acquisitions").isEqualTo(1);
    assertThat(b.active()).as("B: leases held now").isZero();
    assertThat(incident.a().getBean(MeterRegistry.class).find("hikaricp.connections").gauge())
        .as("the pool's own meters, through the fenced DataSource")
        .isNotNull();
  }

  private void delayedWriteDoubleCharges(Locking locking) throws Exception {
    String label = "[two-context, " + locking.annotation + ", fencing off]";
    Incident incident = delayedWriteIncident(locking, false);

    System.out.println(label + " A failed with: " + incident.failureOfA());
    assertThat(incident.failureOfA()).as("A's failure").isNull();
    Map<Long, Integer> perCustomer = chargesPerCustomer();
    System.out.println(label + " charges per customer: " + perCustomer);
    assertThat(perCustomer.values().stream().filter(n -> n > 1).count())
        .as("customers charged twice")
        .isEqualTo(CUSTOMERS - CHARGES_BEFORE_STALL);
    assertThat(incident.a().getBeansOfType(FencingMetrics.class)).isEmpty();
  }

  private record Incident(
      ConfigurableApplicationContext a, ConfigurableApplicationContext b, Throwable failureOfA) {}

  /**
   * A reaches PostgreSQL through a proxy that starts holding what A sends when A begins its fourth
   * charge; B runs the job once A's lease has ended; then the proxy forwards A's write.
   */
  private Incident delayedWriteIncident(Locking locking, boolean fencing) throws Exception {
    HoldingProxy proxy = HoldingProxy.infront(TestDatabase.URL);
    proxies.add(proxy);
    AtomicInteger charges = new AtomicInteger();
    ChargeHook holdTheFourth =
        id -> {
          if (charges.getAndIncrement() == CHARGES_BEFORE_STALL) {
            proxy.hold();
          }
        };
    ConfigurableApplicationContext a =
        start(fencing, holdTheFourth, null, proxy.through(TestDatabase.URL), locking);
    ConfigurableApplicationContext b = start(fencing, id -> {}, null, TestDatabase.URL, locking);
    seedCustomers();

    InstanceRun runA = InstanceRun.start(() -> runJob(a, locking, fencing));
    assertThat(proxy.awaitHeldBytes(30))
        .as("A's fourth charge is on the wire, held; A is at:%n%s", runA.where())
        .isTrue();
    runJobUntilItRuns(b, locking, fencing);
    proxy.release();
    return new Incident(a, b, runA.failure(30));
  }

  private void runJob(ConfigurableApplicationContext context, Locking locking, boolean fencing) {
    if (locking == Locking.SHEDLOCK) {
      context.getBean(ShedLockBillingJob.class).billNightly();
    } else if (fencing) {
      context.getBean(BillingJob.class).billNightly();
    } else {
      underPlainLock(context);
    }
  }

  /** B runs the job: {@code @Fenced} waits for the lease; ShedLock skips, so it is run again. */
  private void runJobUntilItRuns(
      ConfigurableApplicationContext context, Locking locking, boolean fencing)
      throws InterruptedException {
    if (locking == Locking.FENCED) {
      runJob(context, locking, fencing);
      return;
    }
    ShedLockBillingJob job = context.getBean(ShedLockBillingJob.class);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(MAX_WAIT_SECONDS);
    while (job.runs() == 0 && System.nanoTime() < deadline) {
      job.billNightly();
      if (job.runs() == 0) {
        Thread.sleep(20);
      }
    }
    assertThat(job.runs()).as("B's ShedLock job ran").isOne();
  }

  /** The meters of one context's registry. */
  private static final class Meters {
    private final MeterRegistry registry;

    Meters(ConfigurableApplicationContext context) {
      this.registry = context.getBean(MeterRegistry.class);
    }

    double lost(String... reason) {
      return sum(
          FencingMetrics.LOST,
          reason.length == 0 ? new String[0] : new String[] {"reason", reason[0]});
    }

    double rejected(String... where) {
      return sum(
          FencingMetrics.REJECTED,
          where.length == 0 ? new String[0] : new String[] {"where", where[0]});
    }

    double registered() {
      return sum(FencingMetrics.REGISTRATIONS, "outcome", "registered");
    }

    long acquired() {
      return registry.find(FencingMetrics.ACQUISITIONS).tag("outcome", "acquired").timers().stream()
          .mapToLong(Timer::count)
          .sum();
    }

    double active() {
      return registry.get(FencingMetrics.ACTIVE).gauge().value();
    }

    private double sum(String name, String... tags) {
      return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "%s=%.0f (expired %.0f), %s=%.0f, %s{registered}=%.0f, %s{acquired}=%d, %s=%.0f",
          FencingMetrics.LOST,
          lost(),
          lost("expired"),
          FencingMetrics.REJECTED,
          rejected(),
          FencingMetrics.REGISTRATIONS,
          registered(),
          FencingMetrics.ACQUISITIONS,
          acquired(),
          FencingMetrics.ACTIVE,
          active());
    }
  }

  @Test
  void staleInstanceIsRejectedAndEveryCustomerIsChargedOnce() throws Exception {
    Stall stall = new Stall();
    ConfigurableApplicationContext a = start(true, stall.hook());
    ConfigurableApplicationContext b = start(true, id -> {});
    seedCustomers();

    InstanceRun runA = InstanceRun.start(() -> a.getBean(BillingJob.class).billNightly());
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS))
        .as("A stalled; A is at:%n%s", runA.where())
        .isTrue();
    b.getBean(BillingJob.class).billNightly(); // waits for A's lease to expire, then bills
    stall.resume.countDown();
    Throwable failureOfA = runA.failure(30);

    assertThat(failureOfA)
        .as("A's write after its lease expired: refused in the JVM, before reaching the database")
        .isInstanceOf(StaleLeaseWriteException.class);
    StaleLeaseWriteException refused = (StaleLeaseWriteException) failureOfA;
    assertThat(refused.refusedBy()).isEqualTo(StaleLeaseWriteException.RefusedBy.JVM);
    assertThat(refused.leaseLost()).isPresent();
    assertThat(refused.leaseLost().orElseThrow()).isInstanceOf(LeaseLostException.class);
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
    Meters metersOfA = new Meters(a);
    System.out.println("[two-context, fenced] meters of A: " + metersOfA);
    assertThat(metersOfA.lost("expired")).isEqualTo(1);
    assertThat(metersOfA.rejected("database"))
        .as("refused in the JVM: nothing reached the database to reject")
        .isZero();
    assertThat(metersOfA.rejected("jvm")).as("refused in the JVM, counted once").isEqualTo(1);
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

      InstanceRun runA = InstanceRun.start(() -> a.getBean(BillingJob.class).billNightly());
      assertThat(stall.stalled.await(30, TimeUnit.SECONDS))
          .as("A stalled; A is at:%n%s", runA.where())
          .isTrue();
      b.getBean(BillingJob.class).billNightly();
      stall.resume.countDown();
      Throwable failureOfA = runA.failure(30);

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

    InstanceRun runA = InstanceRun.start(() -> underPlainLock(a));
    assertThat(stall.stalled.await(30, TimeUnit.SECONDS))
        .as("A stalled; A is at:%n%s", runA.where())
        .isTrue();
    underPlainLock(b);
    stall.resume.countDown();
    assertThat(runA.failure(30)).as("A's failure").isNull();

    Map<Long, Integer> perCustomer = chargesPerCustomer();
    System.out.println("[two-context, plain lock] charges per customer: " + perCustomer);
    assertThat(perCustomer.values().stream().filter(n -> n > 1).count())
        .as("customers charged twice")
        .isEqualTo(CUSTOMERS - CHARGES_BEFORE_STALL);
  }

  /** Runs the job under a plain Redis lock with the same lease time and wait. */
  private void underPlainLock(ConfigurableApplicationContext context) {
    RLock lock = context.getBean(RedissonClient.class).getLock(keyPrefix + "plain-billing");
    try {
      assertThat(lock.tryLock(MAX_WAIT_SECONDS, LEASE_SECONDS, TimeUnit.SECONDS))
          .as("plain lock acquired")
          .isTrue();
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

  /** Instance A's run of the job, on a thread of its own; its failure, or null. */
  private static final class InstanceRun {
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private InstanceRun(Runnable work) {
      thread = new Thread(() -> failure.set(failureOf(work)), "instance-A-job");
      thread.setDaemon(true);
    }

    static InstanceRun start(Runnable work) {
      InstanceRun run = new InstanceRun(work);
      run.thread.start();
      return run;
    }

    /** Returns where A's thread is now, for a failure message. */
    String where() {
      StringBuilder stack = new StringBuilder(thread.getState().toString());
      for (StackTraceElement e : thread.getStackTrace()) {
        stack.append(System.lineSeparator()).append("  at ").append(e);
      }
      Throwable failed = failure.get();
      if (failed != null) {
        java.io.StringWriter trace = new java.io.StringWriter();
        failed.printStackTrace(new java.io.PrintWriter(trace));
        stack.append(System.lineSeparator()).append("failed: ").append(trace);
      }
      return stack.toString();
    }

    Throwable failure(long seconds) throws InterruptedException {
      thread.join(TimeUnit.SECONDS.toMillis(seconds));
      assertThat(thread.isAlive()).as("A still running; A is at:%n%s", where()).isFalse();
      return failure.get();
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
    return start(fencing, hook, ownLeaseManager, TestDatabase.URL, Locking.FENCED);
  }

  private ConfigurableApplicationContext start(
      boolean fencing,
      ChargeHook hook,
      LeaseManager ownLeaseManager,
      String jdbcUrl,
      Locking locking) {
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
                  if (!fencing && locking == Locking.SHEDLOCK) {
                    // what a ShedLock user has without fencing: a plain Redis lock
                    ((GenericApplicationContext) c)
                        .registerBean(
                            "plainLockProvider",
                            LockProvider.class,
                            () ->
                                new PlainRedisLockProvider(
                                    c.getBean(RedissonClient.class),
                                    keyPrefix + "plain-shedlock:"));
                  }
                })
            .properties(
                "spring.datasource.url=" + jdbcUrl,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/billing",
                "fencing.enabled=" + fencing,
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.enforce=" + schema + ".charges",
                "billing.resource=billing-nightly",
                "billing.lease-time=" + LEASE_SECONDS + "s",
                "billing.max-wait=" + MAX_WAIT_SECONDS + "s",
                "billing.lock-at-most-for=PT" + LEASE_SECONDS + "S")
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
