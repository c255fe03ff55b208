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
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * MariaDB crashes ({@code SIGKILL} of a private {@code mariadbd}, then InnoDB's crash recovery)
 * right after B's registration returned, A's lease having ended before it. With {@code
 * innodb_flush_log_at_trx_commit = 1} (the default) the registration survives and the stale A stays
 * refused; the control runs B's registration with {@code 0}, which the crash loses: the fence names
 * A again and A's guarded write commits. (A process crash is what runs here; {@code 2} loses
 * commits only when the host goes down, which no test here does.)
 */
class MariaDbCrashTest {

  private static final String FENCE_SCHEMA = "fencing_it";

  private final String resource = "mariadb-crash-" + UUID.randomUUID();
  private PrivateMariaDb server;
  private HikariDataSource pool;
  private FencedDataSource db;
  private RedissonClient redisson;
  private RedisLeaseManager redisLeases;
  private LeaseManager leases;

  @BeforeEach
  void setUp() throws SQLException {
    server = PrivateMariaDb.create();
    try (Connection c = DriverManager.getConnection(server.url(""));
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE app");
      s.execute(
          "CREATE TABLE app.writes (writer VARCHAR(20) PRIMARY KEY, token BIGINT NOT NULL)"
              + " ENGINE = InnoDB");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(server.url("app"));
    config.setMaximumPoolSize(4);
    config.setConnectionTimeout(10_000);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool, MigrationOptions.builder().schema(FENCE_SCHEMA).fence("app.writes").build());
    db = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(FENCE_SCHEMA));
    redisson = RedisServers.connectShared();
    redisLeases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
    leases = new FencedLeaseManager(redisLeases, db.fence());
  }

  @AfterEach
  void tearDown() {
    if (redisLeases != null) {
      redisLeases.close();
    }
    if (redisson != null) {
      redisson.shutdown();
    }
    if (pool != null) {
      pool.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A registered, its lease ended; B registered; then the crash and the restart. */
  private Lease[] registrationsThenACrash(boolean flushEachCommit) throws SQLException {
    Lease a =
        leases.acquire(
            resource, LeaseRequest.forLeaseTime(Duration.ofMillis(800)).withoutRenewal());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (a.isHeld()) {
      assertThat(System.nanoTime() - deadline).as("A's lease never ended").isNegative();
      PgReplicaPair.sleep(20);
    }
    if (!flushEachCommit) {
      execute("SET GLOBAL innodb_flush_log_at_trx_commit = 0");
    }
    Lease b =
        leases.acquire(
            resource,
            LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10)));
    server.crash();
    server.start(); // innodb_flush_log_at_trx_commit = 1 again
    pool.getHikariPoolMXBean().softEvictConnections();
    return new Lease[] {a, b};
  }

  @Test
  void aRegistrationThatReturnedSurvivesACrashOfMariaDb() throws Exception {
    Lease[] ab = registrationsThenACrash(true);
    Lease a = ab[0];
    Lease b = ab[1];

    assertThat(fenceToken()).as("the fence after the crash").isEqualTo(b.token().value());
    assertThatThrownBy(() -> write(StaleViews.believedHeld(a), "A"))
        .isInstanceOf(StaleTokenException.class);
    write(b, "B");
    assertThat(writers()).containsExactly("B");
  }

  @Test
  void controlWithInnodbFlushLogAtTrxCommit0TheCrashLosesTheRegistrationAndTheStaleWriteLands()
      throws Exception {
    Lease[] ab = registrationsThenACrash(false);
    Lease a = ab[0];

    assertThat(fenceToken()).as("the fence went back to A").isEqualTo(a.token().value());
    write(StaleViews.believedHeld(a), "A");
    assertThat(writers()).containsExactly("A");
  }

  private void write(Lease lease, String writer) throws SQLException {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement insert =
                  GuardedStatements.insert(c, "app.writes", "writer", "token")) {
            insert.setString(1, writer);
            insert.setLong(2, lease.token().value());
            assertThat(insert.executeUpdate()).isEqualTo(1);
          }
        });
  }

  private long fenceToken() throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement read =
            c.prepareStatement("SELECT token FROM " + FENCE_SCHEMA + ".fence WHERE resource = ?")) {
      read.setString(1, resource);
      try (ResultSet r = read.executeQuery()) {
        return r.next() ? r.getLong(1) : 0;
      }
    }
  }

  private List<String> writers() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT writer FROM app.writes ORDER BY writer")) {
      List<String> names = new ArrayList<>();
      while (r.next()) {
        names.add(r.getString(1));
      }
      return names;
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
