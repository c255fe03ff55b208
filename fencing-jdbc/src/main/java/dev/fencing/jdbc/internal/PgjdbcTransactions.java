package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.BooleanSupplier;

/**
 * pgjdbc's report of the server's transaction status and of its backend, when the driver is pgjdbc.
 */
final class PgjdbcTransactions {
  private static final boolean PRESENT = present();

  private PgjdbcTransactions() {}

  static boolean isPgjdbc(Connection connection) {
    try {
      return PRESENT && Probe.isPgjdbc(connection);
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * The backend process id pgjdbc learned when it connected (no round trip), or 0 when the driver
   * is not pgjdbc.
   */
  static int backendPid(Connection connection) {
    try {
      return PRESENT ? Probe.backendPid(connection) : 0;
    } catch (SQLException e) {
      return 0;
    }
  }

  static BooleanSupplier idleProbe(Connection connection) {
    if (!PRESENT) {
      return () -> false;
    }
    try {
      return Probe.of(connection);
    } catch (SQLException e) {
      return () -> false;
    }
  }

  private static boolean present() {
    try {
      Class.forName(
          "org.postgresql.core.BaseConnection", false, PgjdbcTransactions.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Loaded only when pgjdbc is present. */
  private static final class Probe {
    static boolean isPgjdbc(Connection connection) throws SQLException {
      return connection.isWrapperFor(org.postgresql.core.BaseConnection.class);
    }

    static int backendPid(Connection connection) throws SQLException {
      return connection.isWrapperFor(org.postgresql.core.BaseConnection.class)
          ? connection.unwrap(org.postgresql.core.BaseConnection.class).getBackendPID()
          : 0;
    }

    static BooleanSupplier of(Connection connection) throws SQLException {
      if (!connection.isWrapperFor(org.postgresql.core.BaseConnection.class)) {
        return () -> false;
      }
      org.postgresql.core.BaseConnection pg =
          connection.unwrap(org.postgresql.core.BaseConnection.class);
      return () -> pg.getTransactionState() == org.postgresql.core.TransactionState.IDLE;
    }
  }
}
