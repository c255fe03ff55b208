package dev.fencing.jdbc.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A statement of a fenced connection. Every execution goes through {@link #execution} or {@link
 * #routed}: the lease is checked, the connection's per-transaction state is in place, and the
 * fence's refusals are reported as the library's exceptions; plain SQL goes through the
 * connection's plain SQL policy. A write the policy rewrote into its guarded form, or a guarded
 * statement, that affects no row (an update count of 0, an empty {@code RETURNING}, or a batch row
 * the driver reports no count for) is classified like a guarded statement: a rejection while the
 * fence names another holder, never a silent "no such row". Result sets and the connection it hands
 * out are the fenced ones.
 *
 * @param <S> the wrapped statement's type
 */
public class FencedStatement<S extends Statement> extends DelegatingStatement<S> {

  /** The fenced connection that created this statement. */
  protected final FencedConnection connection;

  private final Routing routing;

  /** Whether the pending batch holds plain SQL that the policy rewrote. */
  private boolean batchRewritten;

  FencedStatement(FencedConnection connection, S delegate, Routing routing) {
    super(delegate);
    this.connection = connection;
    this.routing = routing;
  }

  @Override
  <T> T execution(SqlCall<T> call) throws SQLException {
    boolean guarded = routing == Routing.GUARDED || batchRewritten;
    batchRewritten = false;
    T result;
    try {
      result = connection.execute(call);
    } finally {
      if (routing == Routing.MAY_CONTROL_TRANSACTION) {
        connection.transactionMayHaveChanged();
      }
    }
    return guarded ? classified(result) : result;
  }

  @Override
  <T> T routed(String sql, RoutedCall<T> call) throws SQLException {
    String routed = connection.routePlainSql(sql);
    T result = connection.execute(() -> call.call(routed));
    return routed.equals(sql) ? result : classified(result);
  }

  @Override
  public void addBatch(String sql) throws SQLException {
    String routed = connection.routePlainSql(sql);
    batchRewritten |= !routed.equals(sql);
    delegate.addBatch(routed);
  }

  /** Classifies a guarded execution's result when it says that some write affected no row. */
  private <T> T classified(T result) throws SQLException {
    if (affectedNoRow(result)) {
      connection.classifyNoRows();
    }
    return result;
  }

  private boolean affectedNoRow(Object result) throws SQLException {
    if (result instanceof Number count) {
      return count.longValue() == 0;
    }
    // a batch whose driver reports no count for a row (SUCCESS_NO_INFO, e.g. MariaDB's bulk
    // protocol) may hold a refused row: classified too, one read of the fence
    if (result instanceof int[] counts) {
      return java.util.Arrays.stream(counts)
          .anyMatch(count -> count == 0 || count == Statement.SUCCESS_NO_INFO);
    }
    if (result instanceof long[] counts) {
      return java.util.Arrays.stream(counts)
          .anyMatch(count -> count == 0 || count == Statement.SUCCESS_NO_INFO);
    }
    if (result instanceof ResultSet rows) {
      return !rows.isBeforeFirst();
    }
    if (Boolean.TRUE.equals(result)) {
      return !delegate.getResultSet().isBeforeFirst();
    }
    return Boolean.FALSE.equals(result) && delegate.getUpdateCount() == 0;
  }

  @Override
  public FencedConnection getConnection() {
    return connection;
  }

  @Override
  FencedResultSet wrap(ResultSet raw) {
    return raw == null ? null : new FencedResultSet(this, raw);
  }

  @Override
  Object wrapObject(Object raw) {
    return raw instanceof ResultSet rows ? wrap(rows) : raw;
  }

  /** Closes this statement and {@code second}, a second form of it (null if never prepared). */
  void closeWith(Statement second) throws SQLException {
    try {
      if (second != null) {
        second.close();
      }
    } finally {
      delegate.close();
    }
  }

  @Override
  public String toString() {
    return "Fenced" + delegate;
  }
}
