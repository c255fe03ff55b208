package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseUnavailableException;
import dev.fencing.core.RedisLeaseManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A holder frozen while its backend is <em>active</em> (its client stopped reading a result set, so
 * the backend sits in {@code ClientWrite}; or a long statement) still holds the fence row, and
 * {@code idle_in_transaction_session_timeout} never fires for it. Registration keeps its bound:
 * after a quarter of the lease time it ends the sessions that lock the row for the older
 * registration.
 *
 * <p>Bounds asserted: the successor registers no earlier than a quarter of the lease time after its
 * registration started (the old holder is given that long to finish), and no later than that plus
 * {@link #SLACK} (generous, for a busy 2-core machine; measured: a few tens of ms).
 */
class RegistrationBoundTest {

  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration BOUND = LEASE.dividedBy(4);
  private static final Duration SLACK = Duration.ofSeconds(5);
  private static final Duration LONG_TIMEOUT = Duration.ofSeconds(60);

  private static FencingFixture fx;
  private static ExecutorService holders;
  private static final AtomicInteger resources = new AtomicInteger();

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
    holders = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void tearDown() {
    holders.shutdownNow();
    fx.close();
  }

  @Test
  void aHolderWhoseClientStoppedReadingIsEndedAfterOneLeaseTime() throws Exception {
    String resource = nextResource("client-write");
    RedisLeaseManager leases = fx.leases();
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    String otherResource = nextResource("client-write-bystander");
    Lease other = registered(leases.acquire(otherResource, FencingFixture.lease(LEASE)));
    try (FrozenPgClient frozen = clientStoppedReadingInside(a);
        FrozenPgClient bystander = clientStoppedReadingInside(other)) {
      fx.expireInRedis(resource);
      fx.expireInRedis(otherResource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));

      Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

      report("client stopped reading (ClientWrite)", waited);
      assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
      awaitGone(frozen.backendPid());
      assertThat(fx.db.fence().currentToken(resource)).hasValue(b.token().value());
      assertThat(waitEventOf(bystander.backendPid()))
          .as("a stale holder of another resource's fence row is not this registration's business")
          .hasValue("ClientWrite");
      terminate(bystander.backendPid());
    }
  }

  /**
   * A successor whose lease is never renewed (ShedLock without keep-alive, {@code @Fenced} without
   * renewal) counts its lease lost at nine tenths of its lease time: the bound must end a frozen
   * holder well before that, or no one ever takes over from it.
   */
  @Test
  void aFrozenHolderIsEndedBeforeANonRenewingSuccessorsLeaseIsJudgedLost() throws Exception {
    String resource = nextResource("client-write-non-renewing");
    RedisLeaseManager leases = fx.leases();
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    try (FrozenPgClient frozen = clientStoppedReadingInside(a)) {
      fx.expireInRedis(resource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE).withoutRenewal());

      Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

      report("client stopped reading, non-renewing successor", waited);
      assertThat(b.isHeld()).isTrue();
      awaitGone(frozen.backendPid());
      assertThat(fx.db.fence().currentToken(resource)).hasValue(b.token().value());
      assertThat(fx.guardedSetOwner(b, 100 + resources.get(), "B")).isZero();
    }
  }

  /**
   * Registration ends only sessions that lock the fence row with {@code SELECT ... FOR SHARE};
   * whoever writes the fence table (another registration, a migration, an operator) is waited for
   * and never ended.
   */
  @Test
  void aSessionWritingTheFenceRowIsNeverEnded() throws Exception {
    String resource = nextResource("fence-writer");
    RedisLeaseManager leases = fx.leases();
    registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    String marker = "writer_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> writer =
        holders.submit(
            () -> {
              try (Connection c = java.sql.DriverManager.getConnection(FencingFixture.URL);
                  Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute(
                    "UPDATE "
                        + fx.fenceSchema
                        + ".fence SET registered_at = registered_at WHERE resource = '"
                        + resource
                        + "'");
                s.execute("SELECT pg_sleep(600) /* " + marker + " */");
              }
              return null;
            });
    int pid = awaitSleeping(marker);
    try {
      fx.expireInRedis(resource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
      Duration timeout = LEASE.multipliedBy(2);

      assertThatThrownBy(() -> fence(true, timeout).register(b))
          .isInstanceOf(SQLTimeoutException.class);

      assertThat(waitEventOf(pid)).hasValue("PgSleep");
    } finally {
      terminate(pid);
    }
    assertThatThrownBy(() -> writer.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
  }

  @Test
  void withoutEndingStaleBlockersAClientThatStoppedReadingBlocksRegistrationUntilItsTimeout()
      throws Exception {
    String resource = nextResource("client-write-control");
    RedisLeaseManager leases = fx.leases();
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    try (FrozenPgClient frozen = clientStoppedReadingInside(a)) {
      fx.expireInRedis(resource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
      Duration timeout = LEASE.multipliedBy(2);

      long start = System.nanoTime();
      assertThatThrownBy(() -> fence(false, timeout).register(b))
          .isInstanceOf(SQLTimeoutException.class)
          .hasMessageContaining("previous holder");
      Duration waited = Duration.ofNanos(System.nanoTime() - start);

      report("client stopped reading, not ended (control)", waited);
      assertThat(waited).isGreaterThanOrEqualTo(timeout);
      assertThat(waitEventOf(frozen.backendPid())).hasValue("ClientWrite");
      terminate(frozen.backendPid());
    }
  }

  @Test
  void aHolderInALongStatementIsEndedAfterOneLeaseTimeAndItsWriteRolledBack() throws Exception {
    String resource = nextResource("long-statement");
    long id = 100 + resources.get();
    fx.insertAccount(id, "nobody", 0);
    RedisLeaseManager leases = fx.leases();
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    String marker = "holder_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> holder = holders.submit(() -> writeThenSleep(a, id, 600, marker));
    int pid = awaitSleeping(marker);
    try {
      fx.expireInRedis(resource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));

      Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

      report("long statement (pg_sleep)", waited);
      assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
      assertThatThrownBy(() -> holder.get(30, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(SQLException.class);
      awaitGone(pid);
      assertThat(fx.ownerOf(id)).isEqualTo("nobody");
      assertThat(fx.guardedSetOwner(b, id, "B")).isEqualTo(1);
    } finally {
      terminate(pid);
    }
  }

  @Test
  void withoutEndingStaleBlockersALongStatementBlocksRegistrationUntilItsTimeout()
      throws Exception {
    String resource = nextResource("long-statement-control");
    long id = 100 + resources.get();
    fx.insertAccount(id, "nobody", 0);
    RedisLeaseManager leases = fx.leases();
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
    String marker = "holder_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> holder = holders.submit(() -> writeThenSleep(a, id, 600, marker));
    int pid = awaitSleeping(marker);
    try {
      fx.expireInRedis(resource);
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
      Duration timeout = LEASE.multipliedBy(2);

      long start = System.nanoTime();
      assertThatThrownBy(() -> fence(false, timeout).register(b))
          .isInstanceOf(SQLTimeoutException.class);
      Duration waited = Duration.ofNanos(System.nanoTime() - start);

      report("long statement, not ended (control)", waited);
      assertThat(waited).isGreaterThanOrEqualTo(timeout);
      assertThat(waitEventOf(pid)).hasValue("PgSleep");
    } finally {
      terminate(pid);
    }
    assertThatThrownBy(() -> holder.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
  }

  /**
   * The bound is a grace, not a deadline for the old holder: a transaction that locked the fence
   * row before the successor came and finishes within the bound (a quarter of the successor's lease
   * time) commits, and the successor registers right after it.
   */
  @Test
  void anInFlightHolderThatFinishesWithinTheBoundCommitsAndIsNotEnded() throws Exception {
    String resource = nextResource("in-flight");
    long id = 100 + resources.get();
    fx.insertAccount(id, "nobody", 0);
    RedisLeaseManager leases = fx.leases();
    Duration longLease = Duration.ofSeconds(8); // a bound of 2 s, for a holder that needs 1 s
    Lease a = registered(leases.acquire(resource, FencingFixture.lease(longLease)));
    String marker = "holder_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> holder = holders.submit(() -> writeThenSleep(a, id, 1, marker));
    awaitSleeping(marker);
    fx.expireInRedis(resource);
    Lease b = leases.acquire(resource, FencingFixture.lease(longLease));

    Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

    report("in-flight holder finishing within the bound", waited);
    holder.get(30, TimeUnit.SECONDS);
    assertThat(waited).isLessThan(longLease.dividedBy(4));
    assertThat(fx.ownerOf(id)).isEqualTo("A");
    assertThat(fx.guardedSetOwner(b, id, "B")).isEqualTo(1);
  }

  /**
   * Structural: a successor registers only once it holds the lease, which Redis grants only after
   * the previous lease expired or was released. A holder that renews its lease is never ended,
   * however long its statement.
   */
  @Test
  void aHolderWhoseLeaseIsStillValidIsNeverEndedHoweverLongItsStatement() throws Exception {
    String resource = nextResource("valid-lease");
    long id = 100 + resources.get();
    fx.insertAccount(id, "nobody", 0);
    Duration leaseTime = LEASE;
    Lease a = fx.fencedLeases().acquire(resource, FencingFixture.lease(leaseTime));
    String marker = "holder_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> holder =
        holders.submit(() -> writeThenSleep(a, id, 3 * leaseTime.toSeconds(), marker));
    awaitSleeping(marker);

    assertThatThrownBy(
            () ->
                fx.fencedLeases()
                    .acquire(
                        resource,
                        FencingFixture.lease(leaseTime).withMaxWait(leaseTime.multipliedBy(2))))
        .isInstanceOf(LeaseUnavailableException.class);

    holder.get(30, TimeUnit.SECONDS);
    assertThat(fx.ownerOf(id)).isEqualTo("A");
    assertThat(fx.db.fence().currentToken(resource)).hasValue(a.token().value());
    a.close();
  }

  /**
   * A registration whose token is not above the fence (a stale registrant) waits past its bound
   * behind the current holder's long statement, but ends no one: it may end only sessions locking
   * the row for a registration older than its own.
   */
  @Test
  void aRegistrationThatIsNotAboveTheFenceEndsNoOne() throws Exception {
    String resource = nextResource("not-above");
    long id = 100 + resources.get();
    fx.insertAccount(id, "nobody", 0);
    Duration leaseTime = Duration.ofSeconds(1);
    RedisLeaseManager leases = fx.leases();
    Lease old = registered(leases.acquire(resource, FencingFixture.lease(leaseTime)));
    fx.expireInRedis(resource);
    Lease current = registered(leases.acquire(resource, FencingFixture.lease(leaseTime)));
    String marker = "holder_" + UUID.randomUUID().toString().replace("-", "");
    Future<?> holder =
        holders.submit(() -> writeThenSleep(current, id, 3 * leaseTime.toSeconds(), marker));
    awaitSleeping(marker);

    long start = System.nanoTime();
    assertThatThrownBy(() -> fence(true, LONG_TIMEOUT).register(FencingFixture.unawareOfLoss(old)))
        .isInstanceOf(StaleTokenException.class);
    Duration waited = Duration.ofNanos(System.nanoTime() - start);

    assertThat(waited).as("it waited past its bound").isGreaterThan(leaseTime);
    holder.get(30, TimeUnit.SECONDS);
    assertThat(fx.ownerOf(id)).isEqualTo("A");
    assertThat(fx.db.fence().currentToken(resource)).hasValue(current.token().value());
  }

  @Test
  void withoutTheRightToEndABlockerRegistrationFailsClearlyAtTheBound() throws Exception {
    String role = "fjw_" + fx.schema.substring("fj_".length());
    fx.exec(
        "CREATE ROLE " + role + " LOGIN NOSUPERUSER",
        "GRANT USAGE ON SCHEMA " + fx.fenceSchema + " TO " + role,
        "GRANT SELECT, INSERT, UPDATE ON " + fx.fenceSchema + ".fence TO " + role);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(FencingFixture.URL.replaceAll("user=[^&]*", "user=" + role));
    config.setUsername(role);
    config.setMaximumPoolSize(2);
    try (HikariDataSource asRole = new HikariDataSource(config)) {
      String resource = nextResource("no-privilege");
      RedisLeaseManager leases = fx.leases();
      Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
      try (FrozenPgClient frozen = clientStoppedReadingInside(a)) {
        fx.expireInRedis(resource);
        Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
        ResourceFence fence =
            new ResourceFence(
                asRole,
                FenceOptions.defaults()
                    .withSchema(fx.fenceSchema)
                    .withRegistrationTimeout(LONG_TIMEOUT));

        long start = System.nanoTime();
        assertThatThrownBy(() -> fence.register(b))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("pg_signal_backend")
            .hasMessageContaining(Integer.toString(frozen.backendPid()))
            .extracting(e -> ((SQLException) e).getSQLState())
            .isEqualTo("42501");
        Duration waited = Duration.ofNanos(System.nanoTime() - start);

        report("no privilege to end the blocker: failed", waited);
        assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
        assertThat(waitEventOf(frozen.backendPid())).hasValue("ClientWrite");
        terminate(frozen.backendPid());
      }
    } finally {
      fx.exec("DROP OWNED BY " + role, "DROP ROLE " + role);
    }
  }

  @Test
  void withoutASecondConnectionRegistrationFailsClearlyAtTheBound() throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(FencingFixture.URL);
    config.setMaximumPoolSize(1);
    config.setConnectionTimeout(250);
    try (HikariDataSource onlyOne = new HikariDataSource(config)) {
      String resource = nextResource("one-connection");
      RedisLeaseManager leases = fx.leases();
      Lease a = registered(leases.acquire(resource, FencingFixture.lease(LEASE)));
      try (FrozenPgClient frozen = clientStoppedReadingInside(a)) {
        fx.expireInRedis(resource);
        Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
        ResourceFence fence =
            new ResourceFence(
                onlyOne,
                FenceOptions.defaults()
                    .withSchema(fx.fenceSchema)
                    .withRegistrationTimeout(LONG_TIMEOUT));

        long start = System.nanoTime();
        assertThatThrownBy(() -> fence.register(b))
            .isInstanceOf(SQLException.class)
            .hasMessageContaining("no second connection");
        Duration waited = Duration.ofNanos(System.nanoTime() - start);

        assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
        assertThat(waitEventOf(frozen.backendPid())).hasValue("ClientWrite");
        terminate(frozen.backendPid());
      }
    }
  }

  private String nextResource(String name) {
    return name + "-" + resources.incrementAndGet();
  }

  private static ResourceFence fence(boolean endStaleBlockers, Duration registrationTimeout) {
    return new ResourceFence(
        fx.pool,
        FenceOptions.defaults()
            .withSchema(fx.fenceSchema)
            .withRegistrationTimeout(registrationTimeout)
            .withEndStaleBlockers(endStaleBlockers));
  }

  private static Lease registered(Lease lease) throws SQLException {
    fx.db.fence().register(lease);
    return lease;
  }

  private static Duration timeRegistration(ResourceFence fence, Lease lease) throws SQLException {
    long start = System.nanoTime();
    fence.register(lease);
    return Duration.ofNanos(System.nanoTime() - start);
  }

  private static void report(String shape, Duration waited) {
    System.out.printf(
        "[registration bound] %s: registration took %d ms (lease time %d ms)%n",
        shape, waited.toMillis(), LEASE.toMillis());
  }

  /**
   * A raw client that locks the fence row for {@code lease}'s registration, as a guarded write
   * does, then stops reading a large result in the same transaction: its backend stays active in
   * {@code ClientWrite}.
   */
  private static FrozenPgClient clientStoppedReadingInside(Lease lease) {
    FrozenPgClient client = new FrozenPgClient(FencingFixture.URL);
    client.query("BEGIN");
    client.query(
        "SELECT 1 FROM "
            + fx.fenceSchema
            + ".fence f WHERE f.resource = '"
            + lease.resource()
            + "' AND f.token = "
            + lease.token().value()
            + " AND f.lease_id = '"
            + lease.leaseId()
            + "' FOR SHARE OF f");
    client.sendAndStopReading("SELECT repeat('x', 1000) FROM generate_series(1, 10000000)");
    awaitWaitEvent(client.backendPid(), "ClientWrite");
    return client;
  }

  /** A guarded update by {@code lease}, then a long statement in the same transaction. */
  private static Void writeThenSleep(Lease lease, long id, long seconds, String marker)
      throws SQLException {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement update =
                GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?")) {
              update.setString(1, "A");
              update.setLong(2, id);
              assertThat(update.executeUpdate()).isEqualTo(1);
            }
            try (Statement sleep = c.createStatement()) {
              sleep.execute("SELECT pg_sleep(" + seconds + ") /* " + marker + " */");
            }
            c.commit();
          }
        });
    return null;
  }

  private static int awaitSleeping(String marker) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() - deadline < 0) {
      Optional<String> pid =
          fx.queryString(
              "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%"
                  + marker
                  + "%'");
      if (pid.isPresent()) {
        return Integer.parseInt(pid.get());
      }
      Thread.sleep(20);
    }
    throw new AssertionError("the holder never started its long statement");
  }

  private static Optional<String> waitEventOf(int pid) {
    return fx.queryString("SELECT wait_event FROM pg_stat_activity WHERE pid = " + pid);
  }

  private static void awaitWaitEvent(int pid, String waitEvent) {
    awaitCondition(
        () -> waitEventOf(pid).filter(waitEvent::equals).isPresent(),
        "backend " + pid + " never reached wait event " + waitEvent);
  }

  private static void awaitGone(int pid) {
    awaitCondition(
        () -> fx.queryString("SELECT pid FROM pg_stat_activity WHERE pid = " + pid).isEmpty(),
        "backend " + pid + " is still there");
  }

  /** Ends a backend (a no-op when it is already gone) and waits until it is gone. */
  private static void terminate(int pid) {
    fx.exec("SELECT pg_terminate_backend(" + pid + ")");
    awaitGone(pid);
  }

  private static void awaitCondition(java.util.function.BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(what + " after 30 s");
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
