package dev.fencing.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * A guarded statement: its SQL carries the row guard and the fence predicate, for every execution
 * and every batch row alike. Before a batch inside a transaction, the connection locks the fence
 * row once and marks the transaction verified, so the rows take the predicate's cheap branch. A
 * write that affected no row is classified with one read of the fence.
 */
final class GuardedPreparedStatement extends FencedPreparedStatement<PreparedStatement> {

  GuardedPreparedStatement(FencedConnection connection, PreparedStatement delegate) {
    super(connection, delegate, false);
  }

  @Override
  <T> T execution(SqlCall<T> call) throws SQLException {
    T result = super.execution(call);
    if (affectedNoRow(result)) {
      connection.classifyNoRows();
    }
    return result;
  }

  @Override
  public int[] executeBatch() throws SQLException {
    connection.verifyForBatch();
    return super.executeBatch();
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    connection.verifyForBatch();
    return super.executeLargeBatch();
  }

  private boolean affectedNoRow(Object result) throws SQLException {
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
}
