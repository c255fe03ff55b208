package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Prepares the rows of a guarded batch as a server-side prepared statement (the binary protocol)
 * when the driver is MariaDB Connector/J, whatever the connection URL says ({@code
 * useServerPrepStmts}): the server then parses the guarded statement, whose fence check is a
 * subquery, once per connection instead of once per row. Rows and update counts are the same as
 * with the text protocol (each row is still its own execution, pipelined, never the bulk protocol,
 * which reports no per-row counts); the SQL is the same, so the server judges every row as before.
 *
 * <p>The statement is prepared on the driver's own connection, under any pool or proxy in between,
 * so a JDBC proxy between the pool and the driver does not see it; it is closed with the guarded
 * statement. With another driver, or a Connector/J without this entry point, the batch is prepared
 * on {@code connection} as before.
 */
final class MariaDbServerPrepare {
  private static final boolean PRESENT = present();

  private MariaDbServerPrepare() {}

  /**
   * Prepares {@code sql} for a batch of single-row executions, server-side when the driver can.
   *
   * @param connection the wrapped (pooled) connection
   * @param sql guarded SQL, no generated keys requested
   * @return the prepared statement
   * @throws SQLException if preparing failed
   */
  static PreparedStatement prepare(Connection connection, String sql) throws SQLException {
    if (PRESENT) {
      try {
        PreparedStatement prepared = Probe.prepare(connection, sql);
        if (prepared != null) {
          return prepared;
        }
      } catch (LinkageError driverWithoutIt) {
        // a Connector/J whose API differs: prepare as the URL says
      }
    }
    return connection.prepareStatement(sql);
  }

  private static boolean present() {
    try {
      Class.forName(
          "org.mariadb.jdbc.Connection", false, MariaDbServerPrepare.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Loaded only when MariaDB Connector/J is present. */
  private static final class Probe {
    static PreparedStatement prepare(Connection connection, String sql) throws SQLException {
      if (!connection.isWrapperFor(org.mariadb.jdbc.Connection.class)) {
        return null;
      }
      return connection
          .unwrap(org.mariadb.jdbc.Connection.class)
          .prepareInternal(
              sql,
              Statement.NO_GENERATED_KEYS,
              ResultSet.TYPE_FORWARD_ONLY,
              ResultSet.CONCUR_READ_ONLY,
              true);
    }
  }
}
