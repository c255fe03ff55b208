package dev.fencing.it.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FenceRegistrationException;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * PostgreSQL fail-overs with the library wired as the README shows it (a pgjdbc multi-host URL with
 * {@code targetServerType=primary}, {@link FencedDataSource}, {@link FencedLeaseManager}): A
 * registers, A's lease ends, B registers, the primary is lost and the standby promoted. Whatever
 * the standby received, the stale A must not write afterwards, and B must not be left holding a
 * lease the fence does not know.
 */
class PostgresFailoverTest {

  private static final Duration A_LEASE = Duration.ofMillis(800);
  private static final long WAIT_SECONDS = 60;

  private final String resource = "failover-" + UUID.randomUUID();
  private PgReplicaPair pair;
  private HikariDataSource pool;
  private FencedDataSource db;
  private RedissonClient redisson;
  private LeaseManager leases;
  private final ExecutorService background = Executors.newCachedThreadPool();

  @AfterEach
  void tearDown() {
    background.shutdownNow();
    if (leases != null) {
      leases.close();
    }
    if (redisson != null) {
      redisson.shutdown();
    }
    if (pool != null) {
      pool.close();
    }
    if (pair != null) {
      pair.close();
    }
  }

  /** Starts the pair, migrates the fence and the billing table, wires the library. */
  private void start(boolean synchronous, String connectionOptions, Duration registrationTimeout)
      throws SQLException {
    pair = PgReplicaPair.start(synchronous);
    pair.primary()
        .execute(
            "CREATE TABLE public.charges (customer bigint PRIMARY KEY, holder text NOT NULL);"
                + " INSERT INTO public.charges VALUES (0, 'nobody')");
    try (HikariDataSource migrations = pool(pair.primary().jdbcUrl(), "")) {
      FencingMigrations.migrate(
          migrations, MigrationOptions.builder().fence("public.charges").build());
    }
    pair.awaitStreaming();
    pool = pool(pair.multiHostUrl(), connectionOptions);
    db =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withRegistrationTimeout(registrationTimeout));
    redisson = RedisServers.connectShared();
    leases =
        new FencedLeaseManager(
            RedisLeaseManager.create(redisson, LeaseOptions.defaults()), db.fence());
  }

  private static HikariDataSource pool(String url, String connectionOptions) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url + connectionOptions);
    config.setMaximumPoolSize(6);
    config.setConnectionTimeout(10_000);
    config.setValidationTimeout(1_000);
    return new HikariDataSource(config);
  }

  /** A registers and its (non-renewed) registration reaches the standby; then its lease ends. */
  private Lease holderAExpired() throws SQLException {
    Lease a = leases.acquire(resource, LeaseRequest.forLeaseTime(A_LEASE).withoutRenewal());
    pair.awaitStreaming();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (a.isHeld()) {
      assertThat(System.nanoTime() - deadline).as("A's lease never ended").isNegative();
      PgReplicaPair.sleep(20);
    }
    return a;
  }

  private static LeaseRequest bRequest() {
    return LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10));
  }

  /** The fail-over, then the pool forgets the connections to the lost primary. */
  private void failOver() throws SQLException {
    pair.failOver();
    pool.getHikariPoolMXBean().softEvictConnections();
  }

  /** A, believing itself the holder, charges customer 1 (guarded) and takes row 0 (plain SQL). */
  private static void staleWrites(FencedDataSource db, Lease a) throws SQLException {
    Fencing.run(
        StaleViews.believedHeld(a),
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement insert =
                  GuardedStatements.insert(c, "public.charges", "customer", "holder")) {
            insert.setLong(1, 1);
            insert.setString(2, "A");
            insert.executeUpdate();
          }
        });
  }

  private static void stalePlainUpdate(FencedDataSource db, Lease a) throws SQLException {
    Fencing.run(
        StaleViews.believedHeld(a),
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement update =
                  c.prepareStatement("UPDATE public.charges SET holder = ? WHERE customer = ?")) {
            update.setString(1, "A");
            update.setLong(2, 0);
            update.executeUpdate();
          }
        });
  }

  /** What A managed to write on the new primary: rows naming A. */
  private long rowsOfA() throws SQLException {
    return Long.parseLong(
        pair.standby().query("SELECT count(*) FROM public.charges WHERE holder = 'A'"));
  }

  /** Asserts that stale A writes nothing on the promoted standby, in either form. */
  private void assertStaleHolderRefused(Lease a) throws SQLException {
    assertThatThrownBy(() -> staleWrites(db, a)).isInstanceOf(StaleTokenException.class);
    assertThatThrownBy(() -> stalePlainUpdate(db, a)).isInstanceOf(StaleTokenException.class);
    assertThat(rowsOfA()).as("rows the stale holder A wrote after the fail-over").isZero();
  }

  /**
   * B still holds its lease: it must not be left holding it while the fence does not know it.
   * Either its lease ends, or (bounded wait) the fence names it again and its writes commit.
   */
  private void assertHolderNotLeftSilently(Lease b) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (b.isHeld() && !fenceNames(b)) {
      assertThat(System.nanoTime() - deadline)
          .as("B holds its lease, but the fence on the new primary never named it")
          .isNegative();
      PgReplicaPair.sleep(50);
    }
    if (b.isHeld()) {
      Fencing.run(
          b,
          () -> {
            try (Connection c = db.getConnection();
                PreparedStatement insert =
                    GuardedStatements.insert(c, "public.charges", "customer", "holder")) {
              insert.setLong(1, 2);
              insert.setString(2, "B");
              assertThat(insert.executeUpdate()).isEqualTo(1);
            }
          });
    }
  }

  private boolean fenceNames(Lease lease) throws SQLException {
    try (Connection c = pair.standby().connect();
        PreparedStatement read =
            c.prepareStatement("SELECT token, lease_id FROM fencing.fence WHERE resource = ?")) {
      read.setString(1, lease.resource());
      try (ResultSet row = read.executeQuery()) {
        return row.next()
            && row.getLong(1) == lease.token().value()
            && lease.leaseId().equals(row.getString(2));
      }
    }
  }

  private long fenceToken() throws SQLException {
    String token =
        pair.standby().query("SELECT token FROM fencing.fence WHERE resource = '" + resource + "'");
    return token == null ? 0 : Long.parseLong(token);
  }

  // ---- 1. an asynchronous standby that missed B's registration is promoted ----

  @Test
  void aStaleHolderCannotWriteAfterAnAsynchronousStandbyThatMissedItsSuccessorIsPromoted()
      throws Exception {
    start(false, "", Duration.ofSeconds(10));
    Lease a = holderAExpired();
    pair.stopShipping();
    Lease b = leases.acquire(resource, bRequest());
    failOver();

    assertStaleHolderRefused(a);
    assertHolderNotLeftSilently(b);
  }

  @Test
  void controlAnAsynchronousFailOverLosesTheSuccessorsRegistrationAndUnfencedStaleWritesLand()
      throws Exception {
    start(false, "", Duration.ofSeconds(10));
    Lease a = holderAExpired();
    pair.stopShipping();
    Lease b = leases.acquire(resource, bRequest());
    failOver();

    assertThat(fenceToken()).as("the fence went back to A").isEqualTo(a.token().value());
    assertThat(b.token().value()).isGreaterThan(a.token().value());
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      assertThat(s.executeUpdate("UPDATE public.charges SET holder = 'A' WHERE customer = 0"))
          .isEqualTo(1);
    }
    assertThat(rowsOfA()).isEqualTo(1);
  }

  // ---- 2. synchronous standby, synchronous_commit = local on the application's connections ----

  @Test
  void aRegistrationWaitsForTheSynchronousStandbyEvenWhenTheConnectionsCommitLocally()
      throws Exception {
    start(true, "&options=-c%20synchronous_commit%3Dlocal", Duration.ofSeconds(3));
    assertThat(pair.primary().query("SHOW synchronous_standby_names"))
        .isEqualTo(PgReplicaPair.STANDBY_NAME);
    Lease a = holderAExpired();
    pair.stopShipping();

    assertThatThrownBy(() -> leases.acquire(resource, bRequest()))
        .isInstanceOf(FenceRegistrationException.class);
    failOver();

    assertStaleHolderRefused(a);
  }

  @Test
  void controlWithSynchronousCommitLocalTheSuccessorsRegistrationIsLostInTheFailOver()
      throws Exception {
    start(true, "&options=-c%20synchronous_commit%3Dlocal", Duration.ofSeconds(3));
    Lease a = holderAExpired();
    pair.stopShipping();
    // what the application's own connections do: commit without waiting for the standby
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.executeUpdate("UPDATE public.charges SET holder = 'B' WHERE customer = 0");
    }
    failOver();

    assertThat(rowsOfA()).isZero();
    assertThat(pair.standby().query("SELECT holder FROM public.charges WHERE customer = 0"))
        .as("the locally committed write did not survive")
        .isEqualTo("nobody");
    assertThat(fenceToken()).isEqualTo(a.token().value());
  }

  // ---- 3. the wait for the synchronous standby is cancelled ----

  @Test
  void aRegistrationWhoseReplicationWaitWasCancelledFailsAndIsNotHandedOut() throws Exception {
    start(true, "", Duration.ofSeconds(60));
    Lease a = holderAExpired();
    pair.stopShipping();

    Future<Lease> b = background.submit(() -> leases.acquire(resource, bRequest()));
    int waiter = awaitSyncRepWaiter();
    assertThat(pair.primary().query("SELECT pg_cancel_backend(" + waiter + ")::text"))
        .isEqualTo("true");

    assertThatThrownBy(() -> b.get(WAIT_SECONDS, TimeUnit.SECONDS))
        .hasCauseInstanceOf(FenceRegistrationException.class)
        .cause()
        .hasMessageContaining("replicat");
    failOver();

    assertStaleHolderRefused(a);
  }

  @Test
  void aRegistrationNeverWaitsForAnUnreachableSynchronousStandbyBeyondItsTimeout()
      throws Exception {
    start(true, "", Duration.ofSeconds(2));
    holderAExpired();
    pair.stopShipping();

    CompletableFuture<Lease> b =
        CompletableFuture.supplyAsync(() -> leases.acquire(resource, bRequest()), background);
    assertThatThrownBy(() -> b.get(WAIT_SECONDS, TimeUnit.SECONDS))
        .hasCauseInstanceOf(FenceRegistrationException.class);
    assertThat(
            pair.primary()
                .query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'"))
        .as("registration backends left waiting for the standby")
        .isEqualTo("0");
  }

  @Test
  void controlACancelledReplicationWaitReportsTheCommitWithOnlyAWarning() throws Exception {
    start(true, "", Duration.ofSeconds(60));
    pair.stopShipping();
    try (Connection c = pair.primary().connect()) {
      c.setAutoCommit(false);
      int pid;
      try (Statement s = c.createStatement();
          ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
        r.next();
        pid = r.getInt(1);
      }
      try (Statement s = c.createStatement()) {
        s.executeUpdate("UPDATE public.charges SET holder = 'B' WHERE customer = 0");
      }
      Future<?> cancel =
          background.submit(
              () -> {
                awaitSyncRepWaiter();
                return pair.primary().query("SELECT pg_cancel_backend(" + pid + ")");
              });
      c.commit(); // returns: PostgreSQL committed locally
      cancel.get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertThat((Object) c.getWarnings()).isNotNull();
      assertThat(c.getWarnings().getMessage())
          .contains("canceling wait for synchronous replication");
    }
    failOver();
    assertThat(pair.standby().query("SELECT holder FROM public.charges WHERE customer = 0"))
        .isEqualTo("nobody");
  }

  private int awaitSyncRepWaiter() throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (true) {
      String pid =
          pair.primary()
              .query("SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' LIMIT 1");
      if (pid != null) {
        return Integer.parseInt(pid);
      }
      assertThat(System.nanoTime() - deadline)
          .as("no backend ever waited for the synchronous standby")
          .isNegative();
      PgReplicaPair.sleep(20);
    }
  }
}
