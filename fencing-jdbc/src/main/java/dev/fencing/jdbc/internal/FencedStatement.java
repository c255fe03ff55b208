package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;

/**
 * A statement of a fenced connection. Every execution goes through {@link #execution}: the lease is
 * checked, the connection's per-transaction state is in place, and the fence's refusals are
 * reported as the library's exceptions; plain SQL goes through the connection's plain SQL policy.
 *
 * @param <S> the wrapped statement's type
 */
public class FencedStatement<S extends Statement> implements Statement {

  /** The wrapped statement. */
  protected final S delegate;

  /** The fenced connection that created this statement. */
  protected final FencedConnection connection;

  private final boolean controlsTransaction;

  FencedStatement(FencedConnection connection, S delegate, boolean controlsTransaction) {
    this.connection = connection;
    this.delegate = delegate;
    this.controlsTransaction = controlsTransaction;
  }

  /**
   * Runs one execution of this statement.
   *
   * @param call the driver call
   * @return its result
   * @throws SQLException as reported by {@link FenceClassifier#translate}
   */
  <T> T execution(SqlCall<T> call) throws SQLException {
    try {
      return connection.execute(call);
    } finally {
      if (controlsTransaction) {
        connection.transactionMayHaveChanged();
      }
    }
  }

  /**
   * Runs plain SQL as the connection's policy routes it; a statement the policy rewrote into its
   * guarded form that affects no row is classified like a guarded statement (a rejection while the
   * fence names another holder, never a silent "no such row").
   */
  private <T> T routedExecution(String sql, RoutedCall<T> call) throws SQLException {
    String routed = connection.routePlainSql(sql);
    T result = execution(() -> call.call(routed));
    if (!routed.equals(sql) && affectedNoRow(result)) {
      connection.classifyNoRows();
    }
    return result;
  }

  @FunctionalInterface
  private interface RoutedCall<T> {
    T call(String sql) throws SQLException;
  }

  /** Whether an execution's result says that some write affected no row. */
  boolean affectedNoRow(Object result) throws SQLException {
    if (result instanceof Integer count) {
      return count == 0;
    }
    if (result instanceof Long count) {
      return count == 0L;
    }
    if (result instanceof int[] counts) {
      for (int count : counts) {
        if (count == 0) {
          return true;
        }
      }
      return false;
    }
    if (result instanceof long[] counts) {
      for (long count : counts) {
        if (count == 0L) {
          return true;
        }
      }
      return false;
    }
    if (result instanceof Boolean resultSet) {
      return !resultSet && delegate.getUpdateCount() == 0;
    }
    return false;
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }

  @Override
  public String toString() {
    return "Fenced" + delegate;
  }

  @Override
  public void addBatch(String p0) throws SQLException {
    delegate.addBatch(connection.routePlainSql(p0));
  }

  @Override
  public void cancel() throws SQLException {
    delegate.cancel();
  }

  @Override
  public void clearBatch() throws SQLException {
    delegate.clearBatch();
  }

  @Override
  public void clearWarnings() throws SQLException {
    delegate.clearWarnings();
  }

  @Override
  public void close() throws SQLException {
    delegate.close();
  }

  @Override
  public void closeOnCompletion() throws SQLException {
    delegate.closeOnCompletion();
  }

  @Override
  public String enquoteIdentifier(String p0, boolean p1) throws SQLException {
    return delegate.enquoteIdentifier(p0, p1);
  }

  @Override
  public String enquoteLiteral(String p0) throws SQLException {
    return delegate.enquoteLiteral(p0);
  }

  @Override
  public String enquoteNCharLiteral(String p0) throws SQLException {
    return delegate.enquoteNCharLiteral(p0);
  }

  @Override
  public boolean execute(String p0, int[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.execute(routed, p1));
  }

  @Override
  public boolean execute(String p0, String[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.execute(routed, p1));
  }

  @Override
  public boolean execute(String p0, int p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.execute(routed, p1));
  }

  @Override
  public boolean execute(String p0) throws SQLException {
    return routedExecution(p0, routed -> delegate.execute(routed));
  }

  @Override
  public int[] executeBatch() throws SQLException {
    return execution(() -> delegate.executeBatch());
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    return execution(() -> delegate.executeLargeBatch());
  }

  @Override
  public long executeLargeUpdate(String p0, int[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeLargeUpdate(routed, p1));
  }

  @Override
  public long executeLargeUpdate(String p0, String[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeLargeUpdate(routed, p1));
  }

  @Override
  public long executeLargeUpdate(String p0, int p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeLargeUpdate(routed, p1));
  }

  @Override
  public long executeLargeUpdate(String p0) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeLargeUpdate(routed));
  }

  @Override
  public ResultSet executeQuery(String p0) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeQuery(routed));
  }

  @Override
  public int executeUpdate(String p0, int[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeUpdate(routed, p1));
  }

  @Override
  public int executeUpdate(String p0, String[] p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeUpdate(routed, p1));
  }

  @Override
  public int executeUpdate(String p0, int p1) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeUpdate(routed, p1));
  }

  @Override
  public int executeUpdate(String p0) throws SQLException {
    return routedExecution(p0, routed -> delegate.executeUpdate(routed));
  }

  @Override
  public Connection getConnection() throws SQLException {
    return connection;
  }

  @Override
  public int getFetchDirection() throws SQLException {
    return delegate.getFetchDirection();
  }

  @Override
  public int getFetchSize() throws SQLException {
    return delegate.getFetchSize();
  }

  @Override
  public ResultSet getGeneratedKeys() throws SQLException {
    return delegate.getGeneratedKeys();
  }

  @Override
  public long getLargeMaxRows() throws SQLException {
    return delegate.getLargeMaxRows();
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    return delegate.getLargeUpdateCount();
  }

  @Override
  public int getMaxFieldSize() throws SQLException {
    return delegate.getMaxFieldSize();
  }

  @Override
  public int getMaxRows() throws SQLException {
    return delegate.getMaxRows();
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    return delegate.getMoreResults();
  }

  @Override
  public boolean getMoreResults(int p0) throws SQLException {
    return delegate.getMoreResults(p0);
  }

  @Override
  public int getQueryTimeout() throws SQLException {
    return delegate.getQueryTimeout();
  }

  @Override
  public ResultSet getResultSet() throws SQLException {
    return delegate.getResultSet();
  }

  @Override
  public int getResultSetConcurrency() throws SQLException {
    return delegate.getResultSetConcurrency();
  }

  @Override
  public int getResultSetHoldability() throws SQLException {
    return delegate.getResultSetHoldability();
  }

  @Override
  public int getResultSetType() throws SQLException {
    return delegate.getResultSetType();
  }

  @Override
  public int getUpdateCount() throws SQLException {
    return delegate.getUpdateCount();
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return delegate.getWarnings();
  }

  @Override
  public boolean isCloseOnCompletion() throws SQLException {
    return delegate.isCloseOnCompletion();
  }

  @Override
  public boolean isClosed() throws SQLException {
    return delegate.isClosed();
  }

  @Override
  public boolean isPoolable() throws SQLException {
    return delegate.isPoolable();
  }

  @Override
  public boolean isSimpleIdentifier(String p0) throws SQLException {
    return delegate.isSimpleIdentifier(p0);
  }

  @Override
  public void setCursorName(String p0) throws SQLException {
    delegate.setCursorName(p0);
  }

  @Override
  public void setEscapeProcessing(boolean p0) throws SQLException {
    delegate.setEscapeProcessing(p0);
  }

  @Override
  public void setFetchDirection(int p0) throws SQLException {
    delegate.setFetchDirection(p0);
  }

  @Override
  public void setFetchSize(int p0) throws SQLException {
    delegate.setFetchSize(p0);
  }

  @Override
  public void setLargeMaxRows(long p0) throws SQLException {
    delegate.setLargeMaxRows(p0);
  }

  @Override
  public void setMaxFieldSize(int p0) throws SQLException {
    delegate.setMaxFieldSize(p0);
  }

  @Override
  public void setMaxRows(int p0) throws SQLException {
    delegate.setMaxRows(p0);
  }

  @Override
  public void setPoolable(boolean p0) throws SQLException {
    delegate.setPoolable(p0);
  }

  @Override
  public void setQueryTimeout(int p0) throws SQLException {
    delegate.setQueryTimeout(p0);
  }
}
