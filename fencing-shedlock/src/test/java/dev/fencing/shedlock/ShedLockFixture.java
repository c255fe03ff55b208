package dev.fencing.shedlock;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.redisson.api.RedissonClient;

/**
 * Real PostgreSQL and Redis for one test class: its own table and fence schemas (dropped at the
 * end), its own Redis key prefix, a HikariCP pool wrapped in a trigger-mode {@link
 * FencedDataSource}.
 *
 * <p>Tables: {@code customers(id)} (not fenced); {@code charges(customer_id, amount)} fenced and
 * enforced by the trigger (strict), so plain SQL written in the fencing scope is fenced; {@code
 * plain_charges}, the same without fencing, for the controls; {@code log(token)}, fenced and
 * enforced, for the fuzz run, and {@code plain_log}, its unfenced control.
 */
final class ShedLockFixture implements AutoCloseable {

  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  final String schema;
  final String fenceSchema;
  final String prefix;
  final HikariDataSource pool;
  final FencedDataSource db;
  final RedissonClient redisson;
  private final List<RedisLeaseManager> managers = new ArrayList<>();

  ShedLockFixture() {
    checkPostgres();
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("fs_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("fsf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fs-" + suffix + ":";
    exec(
        "CREATE SCHEMA " + schema,
        "CREATE TABLE " + schema + ".customers (id bigint PRIMARY KEY)",
        "CREATE TABLE "
            + schema
            + ".charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,"
            + " amount bigint NOT NULL)",
        "CREATE TABLE "
            + schema
            + ".plain_charges (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,"
            + " amount bigint NOT NULL)",
        "CREATE TABLE " + schema + ".log (id bigserial PRIMARY KEY, token bigint NOT NULL)",
        "CREATE TABLE " + schema + ".plain_log (id bigserial PRIMARY KEY, token bigint NOT NULL)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(URL);
    config.setMaximumPoolSize(12);
    config.setPoolName("fencing-shedlock-" + suffix);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool,
        MigrationOptions.builder()
            .schema(fenceSchema)
            .enforce(table("charges"), EnforcementMode.STRICT)
            .enforce(table("log"), EnforcementMode.STRICT)
            .build());
    db =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(true));
    redisson = RedisServers.connectShared();
  }

  /** A plain lease manager (one "instance"): leases without registration. */
  synchronized RedisLeaseManager leases() {
    RedisLeaseManager manager =
        RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
    managers.add(manager);
    return manager;
  }

  /** A lease manager that registers in this fixture's fence (one "instance"). */
  FencedLeaseManager fencedLeases() {
    return new FencedLeaseManager(leases(), db.fence());
  }

  String table(String name) {
    return schema + "." + name;
  }

  void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  long queryLong(String sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    managers.forEach(RedisLeaseManager::close);
    redisson.getKeys().deleteByPattern(prefix + "*");
    pool.close();
    exec(
        "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
        "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
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
}
