package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Finding 10 of issue 10 on MariaDB: a holder frozen while its connection is active (its client
 * stopped reading a result set, or a long statement) still holds the fence row in share mode, and
 * the registration of its successor ends it after a quarter of the lease time ({@code KILL
 * CONNECTION}). Only connections that hold this resource's fence row in share mode, in a
 * transaction that has written (InnoDB names read-only transactions 0), are ended; the controls
 * wait until the registration timeout.
 *
 * <p>Bounds asserted as on PostgreSQL ({@code RegistrationBoundTest}): the successor registers no
 * earlier than one lease time after its registration started, and no later than that plus {@link
 * #SLACK}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbRegistrationBoundTest {

  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration BOUND = LEASE.dividedBy(4);
  private static final Duration SLACK = Duration.ofSeconds(5);
  private static final Duration LONG_TIMEOUT = Duration.ofSeconds(60);

  private String database;
  private String fenceDb;
  private String prefix;
  private HikariDataSource pool;
  private FencedDataSource db;
  private RedissonClient redisson;
  private RedisLeaseManager leases;
  private int resources;
  private final List<Connection> frozen = new ArrayList<>();
  private final ExecutorService aborts = Executors.newCachedThreadPool();

  @BeforeAll
  void setUp() throws SQLException {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    database = ("fjb_" + suffix).toLowerCase(Locale.ROOT);
    fenceDb = ("fjbf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fjb-" + suffix + ":";
    exec(
        "CREATE DATABASE " + database,
        "CREATE TABLE "
            + database
            + ".accounts (id BIGINT PRIMARY KEY, owner VARCHAR(100) NOT NULL) ENGINE=InnoDB");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(MariaDbFencingTest.ROOT_URL.replace("/test?", "/" + database + "?"));
    config.setMaximumPoolSize(12);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool, MigrationOptions.builder().schema(fenceDb).fence(database + ".accounts").build());
    db = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceDb));
    redisson = RedisServers.connectShared();
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
  }

  @AfterAll
  void tearDown() {
    aborts.shutdownNow();
    if (leases != null) {
      leases.close();
      redisson.getKeys().deleteByPattern(prefix + "*");
      redisson.shutdown();
    }
    if (pool != null) {
      pool.close();
    }
    exec("DROP DATABASE IF EXISTS " + database, "DROP DATABASE IF EXISTS " + fenceDb);
  }

  /** Ends the test's own frozen connections (by their ids), whatever the test left. */
  @AfterEach
  void endFrozen() throws SQLException {
    for (Connection connection : frozen) {
      org.mariadb.jdbc.Connection raw = connection.unwrap(org.mariadb.jdbc.Connection.class);
      killQuietly(raw.getThreadId());
      raw.abort(aborts);
      try {
        connection.close(); // the pool finds it broken and drops it
      } catch (SQLException e) {
        // ended above
      }
    }
    frozen.clear();
  }

  @Test
  void aHolderWhoseClientStoppedReadingIsEndedAfterOneLeaseTime() throws Exception {
    long id = account();
    String resource = nextResource("client-stopped");
    Lease a = registered(resource);
    String otherResource = nextResource("client-stopped-bystander");
    Lease other = registered(otherResource);
    long holder = clientStoppedReadingAfterAGuardedWrite(a, id);
    long bystander = clientStoppedReadingAfterAGuardedWrite(other, account());
    expireInRedis(resource);
    expireInRedis(otherResource);
    Lease b = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));

    Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

    report("client stopped reading", waited);
    assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
    awaitGone(holder);
    assertThat(db.fence().currentToken(resource)).hasValue(b.token().value());
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = " + id))
        .as("the ended holder's write rolled back")
        .isEqualTo("nobody");
    assertThat(commandOf(bystander))
        .as("a stale holder of another resource's fence row is not this registration's business")
        .hasValue("Query");
  }

  @Test
  void withoutEndingStaleBlockersAClientThatStoppedReadingBlocksRegistrationUntilItsTimeout()
      throws Exception {
    String resource = nextResource("client-stopped-control");
    Lease a = registered(resource);
    long holder = clientStoppedReadingAfterAGuardedWrite(a, account());
    expireInRedis(resource);
    Lease b = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));
    Duration timeout = LEASE.multipliedBy(2);

    long start = System.nanoTime();
    assertThatThrownBy(() -> fence(false, timeout).register(b))
        .isInstanceOf(SQLTimeoutException.class);
    Duration waited = Duration.ofNanos(System.nanoTime() - start);

    report("client stopped reading, not ended (control)", waited);
    assertThat(waited).isGreaterThanOrEqualTo(timeout);
    assertThat(commandOf(holder)).hasValue("Query");
  }

  @Test
  void aHolderInALongStatementIsEndedAfterOneLeaseTimeAndItsWriteRolledBack() throws Exception {
    long id = account();
    String resource = nextResource("long-statement");
    Lease a = registered(resource);
    long holder = guardedWriteThen(a, id, "SELECT SLEEP(600)");
    expireInRedis(resource);
    Lease b = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));

    Duration waited = timeRegistration(fence(true, LONG_TIMEOUT), b);

    report("long statement (SLEEP)", waited);
    assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
    awaitGone(holder);
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = " + id))
        .isEqualTo("nobody");
  }

  /**
   * A transaction that only read the fence row with a lock has no transaction id in InnoDB's views
   * (0, like every read-only transaction), so it cannot be told from others and is not ended.
   */
  @Test
  void aReadOnlyHolderCannotBeNamedAndIsNotEnded() throws Exception {
    String resource = nextResource("read-only");
    Lease a = registered(resource);

    assertWaitedForAndNotEnded(
        resource,
        "SELECT 1 FROM "
            + fenceDb
            + ".fence WHERE resource = '"
            + a.resource()
            + "' LOCK IN SHARE MODE");
  }

  /** Whoever writes the fence row (a registration, an operator) is waited for and never ended. */
  @Test
  void aSessionWritingTheFenceRowIsNeverEnded() throws Exception {
    String resource = nextResource("fence-writer");
    registered(resource);

    assertWaitedForAndNotEnded(
        resource,
        "UPDATE "
            + fenceDb
            + ".fence SET registered_at = registered_at WHERE resource = '"
            + resource
            + "'");
  }

  /**
   * A session that ran {@code sql} in an open transaction (and then sits idle) makes the next
   * holder's registration time out, with ending switched on, and is still there afterwards.
   */
  private void assertWaitedForAndNotEnded(String resource, String sql) throws Exception {
    Connection c = holderConnection();
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
    long session = threadId(c);
    expireInRedis(resource);
    Lease next = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));
    Duration timeout = LEASE.multipliedBy(2);

    assertThatThrownBy(() -> fence(true, timeout).register(next))
        .isInstanceOf(SQLTimeoutException.class);

    assertThat(commandOf(session)).hasValue("Sleep");
  }

  /**
   * A registration whose token is not above the fence (a stale registrant) waits past its bound
   * behind the current holder's long statement, but ends no one: it may end only holders of a
   * registration older than its own.
   */
  @Test
  void aRegistrationThatIsNotAboveTheFenceEndsNoOne() throws Exception {
    String resource = nextResource("not-above");
    Lease old = registered(resource);
    expireInRedis(resource);
    Lease current = registered(resource);
    long holder = guardedWriteThen(current, account(), "SELECT SLEEP(600)");
    Duration timeout = LEASE.multipliedBy(2);

    long start = System.nanoTime();
    assertThatThrownBy(() -> fence(true, timeout).register(StaleViews.believedHeld(old)))
        .isInstanceOf(SQLTimeoutException.class);
    Duration waited = Duration.ofNanos(System.nanoTime() - start);

    assertThat(waited).as("it waited past its bound").isGreaterThanOrEqualTo(timeout);
    assertThat(commandOf(holder)).hasValue("Query");
    assertThat(db.fence().currentToken(resource)).hasValue(current.token().value());
  }

  @Test
  void withoutTheRightToEndABlockerRegistrationFailsClearlyAtTheBound() throws Exception {
    String resource = nextResource("no-kill-privilege");
    Lease a = registered(resource);
    long holder = clientStoppedReadingAfterAGuardedWrite(a, account());
    expireInRedis(resource);
    Lease b = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));

    long start = System.nanoTime();
    asUser(
        true,
        fence ->
            assertThatThrownBy(() -> fence.register(b))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("CONNECTION ADMIN")
                .hasMessageContaining("connection " + holder)
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("42501"));
    Duration waited = Duration.ofNanos(System.nanoTime() - start);

    report("no privilege to end the blocker: failed", waited);
    assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
    assertThat(commandOf(holder)).hasValue("Query");
  }

  @Test
  void withoutTheRightToReadTheLockViewsRegistrationFailsClearlyAtTheBound() throws Exception {
    String resource = nextResource("no-process-privilege");
    Lease a = registered(resource);
    long holder = clientStoppedReadingAfterAGuardedWrite(a, account());
    expireInRedis(resource);
    Lease b = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));

    long start = System.nanoTime();
    asUser(
        false,
        fence ->
            assertThatThrownBy(() -> fence.register(b))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("PROCESS")
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("42501"));
    Duration waited = Duration.ofNanos(System.nanoTime() - start);

    assertThat(waited).isGreaterThanOrEqualTo(BOUND).isLessThan(BOUND.plus(SLACK));
    assertThat(commandOf(holder)).hasValue("Query");
  }

  /** Runs {@code check} with a fence on a pool of a user that may not kill root's connections. */
  private void asUser(boolean process, java.util.function.Consumer<ResourceFence> check) {
    String user = (process ? "fjbp_" : "fjbn_") + database.substring("fjb_".length());
    exec("CREATE USER '" + user + "'@'%'", "GRANT ALL ON " + fenceDb + ".* TO '" + user + "'@'%'");
    if (process) {
      exec("GRANT PROCESS ON *.* TO '" + user + "'@'%'");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        MariaDbFencingTest.ROOT_URL
            .replace("/test?", "/" + fenceDb + "?")
            .replace("user=root", "user=" + user));
    config.setMaximumPoolSize(2);
    try (HikariDataSource asUser = new HikariDataSource(config)) {
      check.accept(
          new ResourceFence(
              asUser,
              FenceOptions.defaults().withSchema(fenceDb).withRegistrationTimeout(LONG_TIMEOUT)));
    } finally {
      exec("DROP USER '" + user + "'@'%'");
    }
  }

  private long account() {
    long id = 1000 + ++resources;
    exec("INSERT INTO " + database + ".accounts (id, owner) VALUES (" + id + ", 'nobody')");
    return id;
  }

  private String nextResource(String name) {
    return name + "-" + ++resources;
  }

  private Lease registered(String resource) throws SQLException {
    Lease lease = leases.acquire(resource, LeaseRequest.forLeaseTime(LEASE));
    db.fence().register(lease);
    return lease;
  }

  private void expireInRedis(String resource) {
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  private ResourceFence fence(boolean endStaleBlockers, Duration registrationTimeout) {
    return new ResourceFence(
        pool,
        FenceOptions.defaults()
            .withSchema(fenceDb)
            .withRegistrationTimeout(registrationTimeout)
            .withEndStaleBlockers(endStaleBlockers));
  }

  private static Duration timeRegistration(ResourceFence fence, Lease lease) throws SQLException {
    long start = System.nanoTime();
    fence.register(lease);
    return Duration.ofNanos(System.nanoTime() - start);
  }

  private static void report(String shape, Duration waited) {
    System.out.printf(
        "[registration bound, MariaDB] %s: registration took %d ms (lease time %d ms)%n",
        shape, waited.toMillis(), LEASE.toMillis());
  }

  /** A connection of the holder's own, outside the pool, ended by the test. */
  private Connection holderConnection() throws SQLException {
    Connection c =
        DriverManager.getConnection(
            MariaDbFencingTest.ROOT_URL.replace("/test?", "/" + database + "?"));
    frozen.add(c);
    return c;
  }

  /**
   * A guarded update by {@code lease} in a transaction, then a large query whose result the client
   * stops reading after the first row: the server's thread blocks writing to the client, active,
   * inside the transaction that holds the fence row.
   */
  private long clientStoppedReadingAfterAGuardedWrite(Lease lease, long id) throws Exception {
    long thread = guardedWriteThen(lease, id, null);
    Connection c = frozen.get(frozen.size() - 1).unwrap(org.mariadb.jdbc.Connection.class);
    Statement big = c.createStatement();
    big.setFetchSize(1);
    ResultSet rows = big.executeQuery("SELECT REPEAT('x', 1000) FROM seq_1_to_10000000");
    assertThat(rows.next()).isTrue();
    awaitCondition(
        () -> commandOf(thread).filter("Query"::equals).isPresent() && timeOf(thread) >= 1,
        "connection " + thread + " never blocked sending its result");
    return thread;
  }

  /**
   * A guarded update by {@code lease} on a connection of the fenced pool, left in its transaction;
   * then, if given, {@code thenSql} in the same transaction on another thread.
   */
  private long guardedWriteThen(Lease lease, long id, String thenSql) throws Exception {
    Connection[] holder = new Connection[1];
    Fencing.run(
        lease,
        () -> {
          Connection c = db.getConnection();
          holder[0] = c;
          frozen.add(c);
          c.setAutoCommit(false);
          try (PreparedStatement update =
              GuardedStatements.update(c, database + ".accounts", "owner = ?", "id = ?")) {
            update.setString(1, "A");
            update.setLong(2, id);
            assertThat(update.executeUpdate()).isEqualTo(1);
          }
        });
    Connection raw = holder[0].unwrap(org.mariadb.jdbc.Connection.class);
    long thread = threadId(raw);
    if (thenSql != null) {
      aborts.submit(
          () -> {
            try (Statement s = raw.createStatement()) {
              s.execute(thenSql);
            }
            return null;
          });
      awaitCondition(
          () -> timeOf(thread) >= 1 && commandOf(thread).filter("Query"::equals).isPresent(),
          "connection " + thread + " never started its long statement");
    }
    return thread;
  }

  private static long threadId(Connection c) throws SQLException {
    return c.unwrap(org.mariadb.jdbc.Connection.class).getThreadId();
  }

  private Optional<String> commandOf(long thread) {
    return Optional.ofNullable(
        query("SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = " + thread));
  }

  private long timeOf(long thread) {
    String time = query("SELECT TIME FROM information_schema.PROCESSLIST WHERE ID = " + thread);
    return time == null ? -1 : Long.parseLong(time);
  }

  private void awaitGone(long thread) {
    awaitCondition(() -> commandOf(thread).isEmpty(), "connection " + thread + " is still there");
  }

  private static void awaitCondition(BooleanSupplier condition, String what) {
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

  private static void killQuietly(long thread) {
    try (Connection c = DriverManager.getConnection(MariaDbFencingTest.ROOT_URL);
        Statement s = c.createStatement()) {
      s.execute("KILL CONNECTION " + thread);
    } catch (SQLException e) {
      // already gone
    }
  }

  private String query(String sql) {
    try (Connection c = DriverManager.getConnection(MariaDbFencingTest.ROOT_URL);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(MariaDbFencingTest.ROOT_URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }
}
