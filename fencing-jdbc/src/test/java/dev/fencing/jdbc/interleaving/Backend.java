package dev.fencing.jdbc.interleaving;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.jooq.SQLDialect;

/**
 * The database a cell runs on: one matrix, two backends. Everything the suite says to a database
 * itself (DDL, the registrar's SQL, watching and cancelling a session) differs per backend; the
 * sessions' writes go through the library, which picks its own dialect.
 */
enum Backend {
  POSTGRES(
      "PostgreSQL",
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"),
      "start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
          + " (or point -Dfencing.test.jdbc at another server)") {
    @Override
    List<String> createTables(String schema) {
      return List.of(
          "CREATE SCHEMA " + schema,
          "CREATE TABLE " + schema + ".items (id bigint PRIMARY KEY, v text NOT NULL)",
          "CREATE TABLE " + schema + ".audited (id bigint PRIMARY KEY, v text NOT NULL)",
          "CREATE TABLE " + schema + ".lenient (id bigint PRIMARY KEY, v text NOT NULL)");
    }

    @Override
    String dropSchema(String schema) {
      return "DROP SCHEMA IF EXISTS " + schema + " CASCADE";
    }

    @Override
    String upsertFence(String fenceTable) {
      return "INSERT INTO "
          + fenceTable
          + " (resource, token, lease_id) VALUES (?, ?, ?) ON CONFLICT (resource) DO UPDATE"
          + " SET token = EXCLUDED.token, lease_id = EXCLUDED.lease_id";
    }

    @Override
    String plainUpsert(String table) {
      return "INSERT INTO "
          + table
          + " (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v";
    }

    @Override
    String registrarLockTimeout(long millis) {
      return "SET LOCAL lock_timeout = '" + millis + "ms'";
    }

    @Override
    String seedBypassingTriggers() {
      return "SET LOCAL session_replication_role = replica";
    }

    @Override
    int pid(Connection connection) throws SQLException {
      return connection.unwrap(org.postgresql.PGConnection.class).getBackendPID();
    }

    @Override
    Connection driver(Connection connection) throws SQLException {
      return (Connection) connection.unwrap(org.postgresql.PGConnection.class);
    }

    @Override
    boolean waitsForLock(Connection observer, int pid) throws SQLException {
      try (PreparedStatement wait =
          observer.prepareStatement(
              "SELECT wait_event_type FROM pg_catalog.pg_stat_activity WHERE pid = ?")) {
        wait.setInt(1, pid);
        try (ResultSet rs = wait.executeQuery()) {
          return rs.next() && "Lock".equals(rs.getString(1));
        }
      }
    }

    @Override
    void cancel(Connection observer, int pid) throws SQLException {
      try (PreparedStatement cancel = observer.prepareStatement("SELECT pg_cancel_backend(?)")) {
        cancel.setInt(1, pid);
        cancel.execute();
      }
    }

    @Override
    SQLDialect jooqDialect() {
      return SQLDialect.POSTGRES;
    }

    @Override
    boolean appliesTo(StatementKind kind) {
      return true;
    }
  },

  /**
   * MariaDB (InnoDB). Trigger mode is refused on MariaDB, and plain SQL is not rewritten there, so
   * the trigger-mode and rewritten-plain-SQL kinds do not apply.
   */
  MARIADB(
      "MariaDB",
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root"),
      "start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd"
          + " -- --user=mysql (or run .ci/run; or point -Dfencing.test.mariadb at another server)") {
    @Override
    List<String> createTables(String schema) {
      return List.of(
          "CREATE DATABASE " + schema,
          "CREATE TABLE "
              + schema
              + ".items (id BIGINT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB");
    }

    @Override
    String dropSchema(String schema) {
      return "DROP DATABASE IF EXISTS " + schema;
    }

    @Override
    String upsertFence(String fenceTable) {
      return "INSERT INTO "
          + fenceTable
          + " (resource, token, lease_id) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE"
          + " token = VALUES(token), lease_id = VALUES(lease_id)";
    }

    @Override
    String plainUpsert(String table) {
      return "INSERT INTO "
          + table
          + " (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)";
    }

    @Override
    String registrarLockTimeout(long millis) {
      return "SET SESSION innodb_lock_wait_timeout = " + Math.max(1, (millis + 999) / 1000);
    }

    @Override
    String seedBypassingTriggers() {
      return null; // items has no trigger on MariaDB
    }

    @Override
    int pid(Connection connection) throws SQLException {
      try (Statement s = driver(connection).createStatement();
          ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
        rs.next();
        return rs.getInt(1);
      }
    }

    @Override
    Connection driver(Connection connection) throws SQLException {
      return connection.unwrap(org.mariadb.jdbc.Connection.class);
    }

    @Override
    boolean waitsForLock(Connection observer, int pid) throws SQLException {
      // The fence check's locking subquery is evaluated while the statement is optimised: its
      // lock wait shows neither in INNODB_TRX (trx_state stays RUNNING) nor in INNODB_LOCK_WAITS
      // on 10.11. A one-row statement still running after LOCK_WAIT_MILLIS is taken as waiting.
      try (PreparedStatement wait =
          observer.prepareStatement(
              "SELECT COMMAND, TIME_MS FROM information_schema.PROCESSLIST WHERE ID = ?")) {
        wait.setInt(1, pid);
        try (ResultSet rs = wait.executeQuery()) {
          return rs.next()
              && "Query".equals(rs.getString(1))
              && rs.getDouble(2) >= LOCK_WAIT_MILLIS;
        }
      }
    }

    @Override
    void cancel(Connection observer, int pid) throws SQLException {
      try (Statement kill = observer.createStatement()) {
        kill.execute("KILL QUERY " + pid);
      }
    }

    @Override
    SQLDialect jooqDialect() {
      return SQLDialect.MARIADB;
    }

    @Override
    boolean appliesTo(StatementKind kind) {
      return !kind.triggerMode && kind != StatementKind.PLAIN_SQL_REWRITTEN;
    }
  };

  /** How long a one-row statement of a session may run before MariaDB takes it as waiting. */
  static final double LOCK_WAIT_MILLIS = 300;

  final String label;
  final String url;
  final String howToStart;

  Backend(String label, String url, String howToStart) {
    this.label = label;
    this.url = url;
    this.howToStart = howToStart;
  }

  /** Creates the schema (a database on MariaDB) and its tables. */
  abstract List<String> createTables(String schema);

  abstract String dropSchema(String schema);

  /** Parameters resource, token, lease id: the fence row written outright. */
  abstract String upsertFence(String fenceTable);

  /** Parameters id, v: a plain upsert, for the control run. */
  abstract String plainUpsert(String table);

  /** Bounds the registrar's wait for the fence row. */
  abstract String registrarLockTimeout(long millis);

  /** A statement that lets the observer's seeding bypass the enforcement trigger, or null. */
  abstract String seedBypassingTriggers();

  /** The server's id of the session behind {@code connection}. */
  abstract int pid(Connection connection) throws SQLException;

  /** The driver's own connection behind a pooled, fenced one. */
  abstract Connection driver(Connection connection) throws SQLException;

  /** Whether the session {@code pid} is waiting for a lock. */
  abstract boolean waitsForLock(Connection observer, int pid) throws SQLException;

  /** Cancels what the session {@code pid} runs. */
  abstract void cancel(Connection observer, int pid) throws SQLException;

  abstract SQLDialect jooqDialect();

  /** Whether the kind runs on this backend. */
  abstract boolean appliesTo(StatementKind kind);

  @Override
  public String toString() {
    return label;
  }
}
