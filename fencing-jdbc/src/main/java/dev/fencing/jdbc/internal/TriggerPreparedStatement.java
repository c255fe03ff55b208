package dev.fencing.jdbc.internal;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.HashMap;
import java.util.Map;

/**
 * A plain prepared statement of a trigger-mode connection: one statement, which the enforcement
 * trigger checks. The trigger needs the registration in transaction-local settings. When a single
 * update execution needs them in its transaction (auto-commit, or the first statement of an
 * explicit transaction), it runs a second form of the statement, {@code settings; statement} (see
 * {@link GuardedSql.Bound#triggerSettings()}), which sends both in one round trip instead of three.
 * pgjdbc sends the statements of one execution with a single Sync, so in auto-commit mode they run
 * in one implicit transaction and the settings end with it; inside a transaction they are simply
 * its first statements. Either way the trigger still checks the fence row for every row written:
 * nothing here decides whether a write is fenced.
 *
 * <p>Everything else (queries, {@code execute}, batches) runs the statement as written, after the
 * settings were carried the usual way.
 */
final class TriggerPreparedStatement extends DelegatingBindingStatement {

  private final String carryingSql;
  private final Map<Integer, Binding> bindings = new HashMap<>();
  private PreparedStatement carrying;

  /** Whether the last execution ran the carrying form: its results are the ones to report. */
  private boolean lastCarried;

  TriggerPreparedStatement(
      FencedConnection connection, PreparedStatement delegate, String settings, String sql) {
    super(connection, delegate, Routing.PLAIN);
    this.carryingSql = settings + "; " + sql;
  }

  @Override
  void bind(int index, Binding binding) throws SQLException {
    binding.apply(delegate);
    bindings.put(index, binding);
  }

  @Override
  public void clearParameters() throws SQLException {
    bindings.clear();
    delegate.clearParameters();
  }

  @Override
  public int executeUpdate() throws SQLException {
    lastCarried = false;
    return connection.executeCarrying(
        () -> delegate.executeUpdate(), () -> Math.toIntExact(carryingUpdate()));
  }

  @Override
  public long executeLargeUpdate() throws SQLException {
    lastCarried = false;
    return connection.executeCarrying(() -> delegate.executeLargeUpdate(), this::carryingUpdate);
  }

  @Override
  <T> T execution(SqlCall<T> call) throws SQLException {
    lastCarried = false;
    return super.execution(call);
  }

  /** The statement whose results the caller sees: the carrying form right after it ran. */
  private PreparedStatement current() {
    return lastCarried ? carrying : delegate;
  }

  @Override
  public int getUpdateCount() throws SQLException {
    return current().getUpdateCount();
  }

  @Override
  public long getLargeUpdateCount() throws SQLException {
    return current().getLargeUpdateCount();
  }

  @Override
  public boolean getMoreResults() throws SQLException {
    return current().getMoreResults();
  }

  @Override
  public boolean getMoreResults(int current) throws SQLException {
    return current().getMoreResults(current);
  }

  @Override
  public FencedResultSet getResultSet() throws SQLException {
    return wrap(current().getResultSet());
  }

  @Override
  public SQLWarning getWarnings() throws SQLException {
    return current().getWarnings();
  }

  @Override
  public void clearWarnings() throws SQLException {
    if (carrying != null) {
      carrying.clearWarnings();
    }
    delegate.clearWarnings();
  }

  /** Runs {@code settings; statement} and returns the statement's update count. */
  private long carryingUpdate() throws SQLException {
    if (carrying == null) {
      carrying = connection.prepareUnrouted(carryingSql);
    }
    carrying.clearParameters();
    for (Binding binding : bindings.values()) {
      binding.apply(carrying);
    }
    carrying.setQueryTimeout(delegate.getQueryTimeout());
    lastCarried = true;
    if (!carrying.execute()) {
      throw new SQLException("the fencing settings returned no row; nothing was run");
    }
    if (carrying.getMoreResults()) {
      throw new SQLException(
          "executeUpdate ran a statement that returns rows; use executeQuery or execute");
    }
    long count = carrying.getLargeUpdateCount();
    if (count < 0) {
      throw new SQLException("the statement returned no update count");
    }
    return count;
  }

  @Override
  public void close() throws SQLException {
    closeWith(carrying);
  }
}
