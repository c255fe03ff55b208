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
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * PostgreSQL crashes (immediate stop of a private primary, then crash recovery) while B's
 * registration is in flight: it waits for the fence row, which the expired holder A's open
 * transaction locks, as A's guarded writes do. The registration must fail and B's lease must not be
 * left held; A's transaction is gone; the next holder registers above A, and A stays refused. The
 * control, with fencing off, sees A's write land after the next holder acquired.
 */
class PostgresCrashTest {

  private final String resource = "crash-" + UUID.randomUUID();
  private final ExecutorService background = Executors.newCachedThreadPool();
  private PgReplicaPair pair;
  private HikariDataSource pool;
  private RedissonClient redisson;
  private RedisLeaseManager redisLeases;

  @AfterEach
  void tearDown() {
    background.shutdownNow();
    if (redisLeases != null) {
      redisLeases.close();
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

  private void start() throws SQLException {
    pair = PgReplicaPair.start(false);
    pair.primary().execute("CREATE TABLE public.writes (writer text PRIMARY KEY)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(pair.primary().jdbcUrl());
    config.setMaximumPoolSize(6);
    config.setConnectionTimeout(10_000);
    pool = new HikariDataSource(config);
    redisson = RedisServers.connectShared();
    redisLeases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
  }

  private static LeaseRequest shortLease() {
    return LeaseRequest.forLeaseTime(Duration.ofMillis(800)).withoutRenewal();
  }

  private static LeaseRequest longLease(Duration maxWait) {
    return LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(maxWait);
  }

  private static void awaitEnded(Lease lease) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (lease.isHeld()) {
      assertThat(System.nanoTime() - deadline).as("the lease never ended").isNegative();
      PgReplicaPair.sleep(20);
    }
  }

  /** The crash and the restart: the primary stopped immediately and started again. */
  private void crashAndRestart() {
    pair.primary().stop(true);
    pair.primary().start();
    pool.getHikariPoolMXBean().softEvictConnections();
  }

  @Test
  void aRegistrationInFlightDuringACrashFailsAndLeavesNoLeaseHeld() throws Exception {
    start();
    FencingMigrations.migrate(pool, MigrationOptions.builder().fence("public.writes").build());
    FencedDataSource db =
        FencedDataSource.wrap(
            pool,
            FenceOptions.defaults()
                .withEndStaleBlockers(false)
                .withRegistrationTimeout(Duration.ofSeconds(60)));
    LeaseManager leases = new FencedLeaseManager(redisLeases, db.fence());
    Lease a = leases.acquire(resource, shortLease());
    awaitEnded(a);

    Connection inFlight = pool.getConnection();
    try {
      inFlight.setAutoCommit(false);
      try (PreparedStatement lock =
          inFlight.prepareStatement(
              "SELECT token FROM fencing.fence WHERE resource = ? FOR SHARE")) {
        lock.setString(1, resource);
        lock.executeQuery().close();
      }
      try (Statement s = inFlight.createStatement()) {
        s.executeUpdate("INSERT INTO public.writes VALUES ('A, in flight')");
      }
      Future<Lease> b =
          background.submit(() -> leases.acquire(resource, longLease(Duration.ofSeconds(10))));
      awaitRegistrationWaiting();
      crashAndRestart();

      assertThatThrownBy(() -> b.get(60, TimeUnit.SECONDS))
          .as("B's registration, in flight during the crash")
          .hasCauseInstanceOf(RuntimeException.class);
    } finally {
      try {
        inFlight.close(); // its server process is gone
      } catch (SQLException expected) {
        // nothing to roll back any more
      }
    }

    assertThat(fenceToken()).as("the fence after the crash").isEqualTo(a.token().value());
    assertThat(pair.primary().query("SELECT count(*) FROM public.writes"))
        .as("A's transaction rolled back")
        .isEqualTo("0");
    // B's lease was released: the next holder acquires at once, registers above A
    Lease c = leases.acquire(resource, longLease(Duration.ofSeconds(3)));
    assertThat(fenceToken()).isEqualTo(c.token().value());
    assertThatThrownBy(() -> write(db, StaleViews.believedHeld(a), "A"))
        .isInstanceOf(StaleTokenException.class);
    write(db, c, "C");
    assertThat(pair.primary().query("SELECT string_agg(writer, ',') FROM public.writes"))
        .isEqualTo("C");
  }

  @Test
  void controlWithFencingOffTheStaleHolderWritesAfterTheCrash() throws Exception {
    start();
    Lease a = redisLeases.acquire(resource, shortLease());
    awaitEnded(a);
    crashAndRestart();
    Lease c = redisLeases.acquire(resource, longLease(Duration.ofSeconds(3)));

    assertThat(c.token().value()).isGreaterThan(a.token().value());
    plainWrite(pool, "A");
    plainWrite(pool, "C");
    assertThat(
            pair.primary()
                .query("SELECT string_agg(writer, ',' ORDER BY writer) FROM public.writes"))
        .isEqualTo("A,C");
  }

  private void awaitRegistrationWaiting() throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!"1"
        .equals(
            pair.primary()
                .query(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND query ILIKE '%fence%' AND pid <> pg_backend_pid()"))) {
      assertThat(System.nanoTime() - deadline)
          .as("B's registration never waited for the fence row")
          .isNegative();
      PgReplicaPair.sleep(20);
    }
  }

  private long fenceToken() throws SQLException {
    String token =
        pair.primary().query("SELECT token FROM fencing.fence WHERE resource = '" + resource + "'");
    return token == null ? 0 : Long.parseLong(token);
  }

  private static void write(FencedDataSource db, Lease lease, String writer) throws SQLException {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement insert = GuardedStatements.insert(c, "public.writes", "writer")) {
            insert.setString(1, writer);
            assertThat(insert.executeUpdate()).isEqualTo(1);
          }
        });
  }

  private static void plainWrite(DataSource db, String writer) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement insert = c.prepareStatement("INSERT INTO public.writes VALUES (?)")) {
      insert.setString(1, writer);
      insert.executeUpdate();
    }
  }
}
