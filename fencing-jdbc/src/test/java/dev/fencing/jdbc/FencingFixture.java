package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.migrations.EnforcementMode;
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
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Real PostgreSQL and Redis for one test class: its own table schema and fence schema (dropped at
 * the end), its own Redis key prefix, a HikariCP pool wrapped in a {@link FencedDataSource}.
 *
 * <p>Tables: {@code accounts(id, owner, balance)} and {@code charges(id, customer_id, amount)} are
 * fenced (column only); {@code audited} also has the enforcement trigger in strict mode. {@code db}
 * fences guarded statements; {@code triggerDb} also carries the settings the trigger reads.
 */
final class FencingFixture implements AutoCloseable {

  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  static final String MARIADB_URL =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  /** Whether this fixture's database is MariaDB (else PostgreSQL). */
  final boolean mariaDb;

  /** The JDBC URL of this fixture's database. */
  final String url;

  final String schema;
  final String fenceSchema;
  final String prefix;
  final HikariDataSource pool;
  final FencedDataSource db;
  final FencedDataSource triggerDb;
  final RedissonClient redisson;
  private final List<RedisLeaseManager> managers = new ArrayList<>();

  FencingFixture() {
    this(false);
  }

  /** A fixture on MariaDB: the same tables (no enforcement trigger: refused on MariaDB). */
  static FencingFixture onMariaDb() {
    return new FencingFixture(true);
  }

  private FencingFixture(boolean mariaDb) {
    this.mariaDb = mariaDb;
    this.url = mariaDb ? MARIADB_URL : URL;
    if (mariaDb) {
      checkMariaDb();
    } else {
      checkPostgres();
    }
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("fj_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("fjf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fj-" + suffix + ":";
    if (mariaDb) {
      exec(
          "CREATE DATABASE " + schema,
          "CREATE TABLE "
              + schema
              + ".accounts (id BIGINT PRIMARY KEY, owner VARCHAR(100) NOT NULL, balance BIGINT NOT"
              + " NULL) ENGINE=InnoDB",
          "CREATE TABLE "
              + schema
              + ".charges (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT NOT NULL"
              + " UNIQUE, amount BIGINT NOT NULL) ENGINE=InnoDB",
          "CREATE TABLE "
              + schema
              + ".audited (id BIGINT PRIMARY KEY, note VARCHAR(100) NOT NULL) ENGINE=InnoDB");
    } else {
      exec(
          "CREATE SCHEMA " + schema,
          "CREATE TABLE "
              + schema
              + ".accounts (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL)",
          "CREATE TABLE "
              + schema
              + ".charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL UNIQUE,"
              + " amount bigint NOT NULL)",
          "CREATE TABLE " + schema + ".audited (id bigint PRIMARY KEY, note text NOT NULL)");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(8);
    config.setPoolName("fencing-test-" + suffix);
    pool = new HikariDataSource(config);
    MigrationOptions.Builder migration =
        MigrationOptions.builder()
            .schema(fenceSchema)
            .fence(schema + ".accounts", schema + ".charges");
    if (!mariaDb) {
      migration.enforce(schema + ".audited", EnforcementMode.STRICT);
    }
    FencingMigrations.migrate(pool, migration.build());
    db = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceSchema));
    triggerDb =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(true));
    redisson = RedisServers.connectShared();
  }

  /** A request for a renewing lease of {@code leaseTime}, without waiting. */
  static LeaseRequest lease(Duration leaseTime) {
    return LeaseRequest.forLeaseTime(leaseTime);
  }

  /** A plain manager: leases without registration. */
  RedisLeaseManager leases() {
    RedisLeaseManager manager =
        RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
    managers.add(manager);
    return manager;
  }

  /** A manager that registers every lease in this fixture's fence. */
  FencedLeaseManager fencedLeases() {
    return new FencedLeaseManager(leases(), db.fence());
  }

  /** A holder whose lease expired unnoticed, and the successor registered after it. */
  record Holders(Lease stale, Lease current) {}

  private int holders;

  /**
   * Acquires and registers a lease, lets it expire in Redis, and acquires and registers the
   * successor: the stale holder still believes it holds the lease.
   */
  Holders staleAndCurrent(String resourcePrefix) {
    String resource = resourcePrefix + "-" + ++holders;
    FencedLeaseManager leases = fencedLeases();
    Lease first = leases.acquire(resource, lease(Duration.ofSeconds(30)));
    expireInRedis(resource);
    Lease current = leases.acquire(resource, lease(Duration.ofSeconds(30)));
    return new Holders(unawareOfLoss(first), current);
  }

  /** Deletes the lock key, as when the lease expired on the server while its holder was paused. */
  void expireInRedis(String resource) {
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  /** Sets the Redis token counter, as after a fail-over to a replica that missed increments. */
  void setRedisCounter(String resource, long value) {
    redisson
        .getBucket(prefix + "{" + resource + "}:token", StringCodec.INSTANCE)
        .set(Long.toString(value));
  }

  String table(String name) {
    return schema + "." + name;
  }

  void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(url);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  Optional<String> queryString(String sql) {
    try (Connection c = DriverManager.getConnection(url);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  long queryLong(String sql) {
    return Long.parseLong(queryString(sql).orElseThrow());
  }

  void insertAccount(long id, String owner, long balance) {
    try (Connection c = DriverManager.getConnection(url);
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO " + table("accounts") + " (id, owner, balance) VALUES (?, ?, ?)")) {
      s.setLong(1, id);
      s.setString(2, owner);
      s.setLong(3, balance);
      s.executeUpdate();
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  /** A guarded update of one account's owner, through the fenced data source in a scope. */
  int guardedSetOwner(Lease lease, long id, String owner) throws SQLException {
    return guardedSetOwner(db, lease, id, owner);
  }

  /** The same guarded update through another fenced data source on this fixture's pool. */
  int guardedSetOwner(FencedDataSource through, Lease lease, long id, String owner)
      throws SQLException {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = through.getConnection();
              PreparedStatement update =
                  GuardedStatements.update(c, table("accounts"), "owner = ?", "id = ?")) {
            update.setString(1, owner);
            update.setLong(2, id);
            return update.executeUpdate();
          }
        });
  }

  /** The same update with fencing switched off: a plain UPDATE, as before this library. */
  int unguardedSetOwner(long id, String owner) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement update =
            c.prepareStatement("UPDATE " + table("accounts") + " SET owner = ? WHERE id = ?")) {
      update.setString(1, owner);
      update.setLong(2, id);
      return update.executeUpdate();
    }
  }

  String ownerOf(long id) {
    return queryString("SELECT owner FROM " + table("accounts") + " WHERE id = " + id)
        .orElseThrow();
  }

  @Override
  public void close() {
    managers.forEach(RedisLeaseManager::close);
    redisson.getKeys().deleteByPattern(prefix + "*");
    pool.close();
    if (mariaDb) {
      exec("DROP DATABASE IF EXISTS " + schema, "DROP DATABASE IF EXISTS " + fenceSchema);
    } else {
      exec(
          "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
          "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
    }
    redisson.shutdown();
  }

  static void checkPostgres() {
    try (Connection c = DriverManager.getConnection(URL)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + URL
              + " ("
              + e.getMessage()
              + "); start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql)"
              + " main start (or point -Dfencing.test.jdbc at another server)",
          e);
    }
  }

  static void checkMariaDb() {
    try (Connection c = DriverManager.getConnection(MARIADB_URL)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          "MariaDB is not reachable at "
              + MARIADB_URL
              + " ("
              + e.getMessage()
              + "); start it with: start-stop-daemon --start --oknodo --background --exec"
              + " /usr/sbin/mariadbd -- --user=mysql (or run .ci/run; or point"
              + " -Dfencing.test.mariadb at another server)",
          e);
    }
  }

  /** The server's id of the session behind a pooled (and possibly fenced) connection. */
  long sessionId(Connection connection) throws SQLException {
    if (!mariaDb) {
      return connection.unwrap(org.postgresql.PGConnection.class).getBackendPID();
    }
    try (Statement s = connection.unwrap(org.mariadb.jdbc.Connection.class).createStatement();
        ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * What the server last saw from session {@code id}: on PostgreSQL its last statement and when it
   * changed, on MariaDB the id of its last query.
   */
  String lastStatementSeenBy(long id) {
    return queryString(
            mariaDb
                ? "SELECT QUERY_ID FROM information_schema.PROCESSLIST WHERE ID = " + id
                : "SELECT query || ' @ ' || state_change FROM pg_stat_activity WHERE pid = " + id)
        .orElseThrow();
  }

  /**
   * The view of a holder that passed its local checks an instant before it froze: it still believes
   * it holds the lease. Only the database can stop its next write.
   */
  static Lease unawareOfLoss(Lease lease) {
    return StaleViews.believedHeld(lease);
  }
}
