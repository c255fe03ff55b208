package dev.fencing.spring;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** The shared PostgreSQL of the tests, for setup and checks outside any application context. */
final class TestDatabase {

  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  private TestDatabase() {}

  static Connection connect() {
    try {
      return DriverManager.getConnection(URL);
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + URL
              + "; start it (pg_ctlcluster 15 main start) or point -Dfencing.test.jdbc at one",
          e);
    }
  }

  static void execute(String... statements) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  static void dropSchemas(String... schemas) throws SQLException {
    for (String schema : schemas) {
      execute("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
    }
  }
}
