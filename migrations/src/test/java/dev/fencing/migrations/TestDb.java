package dev.fencing.migrations;

import dev.fencing.migrations.internal.DriverManagerDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;

/** The real PostgreSQL the tests run against, and per-class schemas that are dropped afterwards. */
final class TestDb implements AutoCloseable {
  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  private final List<String> schemas = new ArrayList<>();

  static Connection connect() {
    try {
      return DriverManager.getConnection(URL);
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + URL
              + " ("
              + e.getMessage()
              + "). Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql)"
              + " main start   (or point -Dfencing.test.jdbc at another server)",
          e);
    }
  }

  static DataSource dataSource() {
    connect(); // fail early, with the message above
    try (Connection c = connect()) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
    return new DriverManagerDataSource(URL, null, null);
  }

  /** A fresh schema name (lower case, random suffix) that {@link #close()} drops. */
  String newSchema(String prefix) {
    String name =
        prefix
            + "_"
            + UUID.randomUUID()
                .toString()
                .replace("-", "")
                .substring(0, 10)
                .toLowerCase(Locale.ROOT);
    schemas.add(name);
    return name;
  }

  /** Creates a fresh schema for user tables. */
  String createSchema(String prefix) {
    String name = newSchema(prefix);
    exec("CREATE SCHEMA " + name);
    return name;
  }

  static void exec(String... sql) {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  static long queryLong(String sql, Object... args) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new AssertionError("no row for " + sql);
        }
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  static String queryString(String sql, Object... args) {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  /** Sets the fencing settings on a connection, transaction-local or session-level. */
  static void setFencing(Connection c, String resource, Long token, String leaseId, boolean local)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT set_config('fencing.resource', ?, ?), set_config('fencing.token', ?, ?),"
                + " set_config('fencing.lease_id', ?, ?)")) {
      ps.setString(1, resource == null ? "" : resource);
      ps.setBoolean(2, local);
      ps.setString(3, token == null ? "" : token.toString());
      ps.setBoolean(4, local);
      ps.setString(5, leaseId == null ? "" : leaseId);
      ps.setBoolean(6, local);
      ps.execute();
    }
  }

  @Override
  public void close() {
    for (String s : schemas) {
      exec("DROP SCHEMA IF EXISTS " + s + " CASCADE");
    }
    schemas.clear();
  }
}
