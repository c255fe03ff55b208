package dev.fencing.migrations.cli;

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

/** The real PostgreSQL the tool is run against, and schemas that {@link #close()} drops. */
final class CliTestDb implements AutoCloseable {
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

  @Override
  public void close() {
    for (String s : schemas) {
      exec("DROP SCHEMA IF EXISTS " + s + " CASCADE");
    }
    schemas.clear();
  }
}
