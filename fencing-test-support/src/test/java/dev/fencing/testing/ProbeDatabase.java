package dev.fencing.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;

/**
 * A real database for one test class: a schema of its own (dropped at the end) with {@code
 * accounts} (fenced), {@code notes} (not fenced) and, on PostgreSQL, {@code audited} (enforced by
 * the strict trigger); a HikariCP pool, and fenced data sources over it through a {@link
 * RecordingDataSource}.
 */
final class ProbeDatabase implements AutoCloseable {

  static final String POSTGRES_URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
  static final String MARIADB_URL =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  final boolean mariaDb;
  final String url;
  final String schema;
  final String fenceSchema;
  final HikariDataSource pool;
  final RecordingDataSource recorded;
  final FencedDataSource db;
  final FencedDataSource triggerDb;

  static ProbeDatabase postgres() {
    return new ProbeDatabase(false);
  }

  static ProbeDatabase mariaDb() {
    return new ProbeDatabase(true);
  }

  private ProbeDatabase(boolean mariaDb) {
    this.mariaDb = mariaDb;
    this.url = mariaDb ? MARIADB_URL : POSTGRES_URL;
    check();
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("fp_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("fpf_" + suffix).toLowerCase(Locale.ROOT);
    if (mariaDb) {
      exec(
          "CREATE DATABASE " + schema,
          "CREATE TABLE "
              + table("accounts")
              + " (id BIGINT PRIMARY KEY, owner VARCHAR(100) NOT NULL, balance BIGINT NOT NULL)"
              + " ENGINE=InnoDB",
          "CREATE TABLE "
              + table("notes")
              + " (id BIGINT PRIMARY KEY, body VARCHAR(100) NOT NULL) ENGINE=InnoDB");
    } else {
      exec(
          "CREATE SCHEMA " + schema,
          "CREATE TABLE "
              + table("accounts")
              + " (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL)",
          "CREATE TABLE " + table("notes") + " (id bigint PRIMARY KEY, body text NOT NULL)",
          "CREATE TABLE " + table("audited") + " (id bigint PRIMARY KEY, note text NOT NULL)");
    }
    exec(
        "INSERT INTO " + table("accounts") + " (id, owner, balance) VALUES (1, 'ada', 100)",
        "INSERT INTO " + table("notes") + " (id, body) VALUES (1, 'first')");
    if (!mariaDb) {
      exec("INSERT INTO " + table("audited") + " (id, note) VALUES (1, 'first')");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(4);
    config.setPoolName("fencing-probe-" + suffix);
    pool = new HikariDataSource(config);
    MigrationOptions.Builder migration =
        MigrationOptions.builder().schema(fenceSchema).fence(table("accounts"));
    if (!mariaDb) {
      migration.enforce(table("audited"), EnforcementMode.STRICT);
    }
    FencingMigrations.migrate(pool, migration.build());
    recorded = RecordingDataSource.wrap(pool);
    db = FencedDataSource.wrap(recorded, FenceOptions.defaults().withSchema(fenceSchema));
    triggerDb =
        mariaDb
            ? null
            : FencedDataSource.wrap(
                recorded, FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(true));
  }

  String table(String name) {
    return schema + "." + name;
  }

  /** A probe of this database's schema through {@code through}. */
  StaleWriterProbe probe(FencedDataSource through) {
    return StaleWriterProbe.on(through).withSchemas(schema);
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

  long queryLong(String sql) {
    try (Connection c = DriverManager.getConnection(url);
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
    pool.close();
    if (mariaDb) {
      exec("DROP DATABASE IF EXISTS " + schema, "DROP DATABASE IF EXISTS " + fenceSchema);
    } else {
      exec(
          "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
          "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
    }
  }

  private void check() {
    try (Connection c = DriverManager.getConnection(url)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          (mariaDb ? "MariaDB" : "PostgreSQL")
              + " is not reachable at "
              + url
              + " ("
              + e.getMessage()
              + "); start it"
              + (mariaDb
                  ? " with: start-stop-daemon --start --oknodo --background --exec"
                      + " /usr/sbin/mariadbd -- --user=mysql (or point -Dfencing.test.mariadb at"
                      + " another server)"
                  : " with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main"
                      + " start (or point -Dfencing.test.jdbc at another server)"),
          e);
    }
  }
}
