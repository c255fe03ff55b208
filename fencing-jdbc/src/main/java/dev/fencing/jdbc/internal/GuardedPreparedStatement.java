package dev.fencing.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * A guarded statement. Executed alone, or batched in auto-commit mode, it runs the form that
 * carries the row guard and the fence predicate. Batched inside a transaction, its rows go to the
 * form that carries the row guard and a check of the registration's marker (random, never shown
 * outside the statements of this registration); right before every such batch, in the same
 * transaction, the connection locks the fence row and sets that marker transaction-locally (or
 * refuses the batch), so no row can write without the database having checked the fence in this
 * transaction. A write that affected no row is classified with one read of the fence.
 *
 * <p>Parameters set before the first {@code addBatch} inside a transaction are remembered and
 * replayed onto the batched form; from then on they go straight to it. The batched form is prepared
 * as the caller prepared this statement (the same request for generated keys); when it ran last,
 * the generated keys are its own.
 */
final class GuardedPreparedStatement extends DelegatingBindingStatement {

  private final GuardedSql.Guarded sql;
  private final FencedConnection.Prepare<PreparedStatement> prepareBatched;
  private Map<Integer, Binding> bindings;
  private PreparedStatement batch;

  /** Whether the last execution was the batched form's. */
  private boolean batchRanLast;

  GuardedPreparedStatement(
      FencedConnection connection,
      PreparedStatement delegate,
      GuardedSql.Guarded sql,
      FencedConnection.Prepare<PreparedStatement> prepareBatched) {
    super(connection, delegate, Routing.GUARDED);
    this.sql = sql;
    this.prepareBatched = prepareBatched;
  }

  @Override
  public void addBatch() throws SQLException {
    if (batch == null) {
      if (connection.getAutoCommit()) {
        delegate.addBatch();
        return;
      }
      batch = prepareBatched.prepare(sql.batched());
      if (bindings != null) {
        for (Binding binding : bindings.values()) {
          binding.apply(batch);
        }
        bindings = null;
      }
    }
    batch.addBatch();
  }

  @Override
  public int[] executeBatch() throws SQLException {
    return batch == null ? super.executeBatch() : verified(() -> batch.executeBatch());
  }

  @Override
  public long[] executeLargeBatch() throws SQLException {
    return batch == null ? super.executeLargeBatch() : verified(() -> batch.executeLargeBatch());
  }

  /** The keys the last execution generated: the batched form's when it ran last. */
  @Override
  public FencedResultSet getGeneratedKeys() throws SQLException {
    return wrap((batchRanLast ? batch : delegate).getGeneratedKeys());
  }

  @Override
  <T> T execution(SqlCall<T> call) throws SQLException {
    batchRanLast = false;
    return super.execution(call);
  }

  /** Runs the batched form inside its transaction, right after the fence check of the batch. */
  private <T> T verified(SqlCall<T> batchCall) throws SQLException {
    requireTransaction();
    return execution(
        () -> {
          connection.verifyBatch();
          T result = batchCall.call();
          batchRanLast = true;
          return result;
        });
  }

  private void requireTransaction() throws SQLException {
    if (connection.getAutoCommit()) {
      throw new SQLException(
          "this guarded statement was batched inside a transaction and cannot run in auto-commit"
              + " mode; prepare a new one");
    }
  }

  @Override
  public void clearBatch() throws SQLException {
    if (batch != null) {
      batch.clearBatch();
    }
    delegate.clearBatch();
  }

  @Override
  public void clearParameters() throws SQLException {
    if (bindings != null) {
      bindings.clear();
    }
    if (batch != null) {
      batch.clearParameters();
    }
    delegate.clearParameters();
  }

  @Override
  public void close() throws SQLException {
    closeWith(batch);
  }

  @Override
  void bind(int index, Binding binding) throws SQLException {
    if (batch != null) {
      binding.apply(batch);
      return;
    }
    binding.apply(delegate);
    if (bindings == null) {
      bindings = new HashMap<>();
    }
    bindings.put(index, binding);
  }
}
