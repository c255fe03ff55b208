package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.StaleTokenException;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.function.BooleanSupplier;

/**
 * A connection handed out inside a fencing scope. It owns the state of the transaction it is in: in
 * trigger mode, whether the registration was already given to the enforcement trigger. Everything
 * it sets in the database is transaction-local ({@code set_config(..., true)}), so nothing outlives
 * the transaction, in a pool or elsewhere; in trigger mode an auto-commit statement runs in a
 * transaction of its own so that its settings are transaction-local too.
 *
 * <p>No write's safety depends on that view. Every guarded statement carries a check the database
 * enforces: the fence predicate, or, for the rows of a batch inside a transaction, the random
 * marker of the registration that {@link GuardedSql.Bound#verify()} set in the same transaction
 * right before the batch, after locking the fence row. The view only saves the trigger settings'
 * round trip; when it is wrong (the transaction was ended or rewound behind the wrapper's back), a
 * strict trigger refuses the write. With pgjdbc, the view also follows the server's own report of
 * whether a transaction is open.
 */
public final class FencedConnection extends DelegatingConnection {

  private final Lease lease;
  private final FenceDialect fence;
  private final FenceGuards guards;
  private final boolean triggerMode;
  private final PlainSqlPolicy plainSql;
  private final FenceObserver observer;
  private final Rejections.FenceReader fenceReader;
  private final BooleanSupplier serverIdle;
  private final boolean settingsRideAlong;
  private boolean settingsInTransaction;

  /**
   * Wraps a connection of a fencing scope.
   *
   * @param delegate the pooled connection
   * @param lease the scope's lease
   * @param fence the fenced database's dialect
   * @param guards the guarded SQL of {@code lease}
   * @param triggerMode whether statements carry the registration for the enforcement trigger
   * @param plainSql what happens to plain SQL sent through this connection
   * @param observer told of every stale write rejected on this connection
   * @param fenceReader reads the fence outside this connection's transaction
   */
  public FencedConnection(
      Connection delegate,
      Lease lease,
      FenceDialect fence,
      FenceGuards guards,
      boolean triggerMode,
      PlainSqlPolicy plainSql,
      FenceObserver observer,
      Rejections.FenceReader fenceReader) {
    super(delegate);
    this.fenceReader = fenceReader;
    this.lease = lease;
    this.fence = fence;
    this.guards = guards;
    this.triggerMode = triggerMode;
    this.plainSql = plainSql;
    this.observer = observer;
    this.serverIdle = PgjdbcTransactions.idleProbe(delegate);
    // Checked with pgjdbc only: it sends the statements of one execution with a single Sync, so
    // "settings; statement" runs in one (implicit) transaction.
    this.settingsRideAlong = triggerMode && PgjdbcTransactions.isPgjdbc(delegate);
  }

  /** Returns the lease of the scope the connection was taken in. */
  public Lease lease() {
    return lease;
  }

  /** Returns the guarded SQL of this connection's lease. */
  public FenceGuards guards() {
    return guards;
  }

  /** Returns whether statements carry the registration for the enforcement trigger. */
  public boolean triggerMode() {
    return triggerMode;
  }

  /**
   * Prepares a guarded statement.
   *
   * @param sql the guarded SQL
   * @return the statement
   * @throws dev.fencing.jdbc.LeaseLostSQLException if the lease is known lost
   * @throws SQLException if preparing failed
   */
  public PreparedStatement prepareGuarded(GuardedSql.Guarded sql) throws SQLException {
    Rejections.checkHeld(lease);
    PreparedStatement prepared = delegate.prepareStatement(sql.sql());
    try {
      return new GuardedPreparedStatement(
          this, prepared, sql, batched -> fence.prepareBatched(delegate, batched));
    } catch (RuntimeException failure) {
      prepared.close();
      throw failure;
    }
  }

  /** Prepares library SQL on the wrapped connection, past the plain SQL policy. */
  PreparedStatement prepareUnrouted(String sql) throws SQLException {
    return delegate.prepareStatement(sql);
  }

  String routePlainSql(String sql) throws SQLException {
    return routePlainSql(sql, SqlLexer.mayControlTransaction(sql));
  }

  private String routePlainSql(String sql, boolean mayControlTransaction) throws SQLException {
    if (mayControlTransaction) {
      transactionMayHaveChanged();
    }
    return plainSql.route(sql, this);
  }

  /** Forgets what this connection knew about its transaction. */
  void transactionMayHaveChanged() {
    settingsInTransaction = false;
  }

  /**
   * Runs one statement execution: refuses it if the lease is known lost, makes the registration
   * visible to the trigger in trigger mode, and translates the fence's refusals.
   */
  <T> T execute(SqlCall<T> call) throws SQLException {
    Rejections.checkHeld(lease);
    if (delegate.getAutoCommit()) {
      return triggerMode ? inOwnTransaction(call) : translated(call);
    }
    joinTransaction();
    return translated(call);
  }

  /**
   * Runs one execution of a trigger-mode statement that can carry the registration's settings
   * itself ({@code carrying}: the settings and the statement in one round trip). It does when the
   * transaction does not have them yet: in auto-commit mode always (the settings end with the
   * implicit transaction), in an explicit transaction for its first statement; otherwise {@code
   * call} runs the statement alone.
   */
  <T> T executeCarrying(SqlCall<T> call, SqlCall<T> carrying) throws SQLException {
    Rejections.checkHeld(lease);
    if (delegate.getAutoCommit()) {
      return translated(carrying);
    }
    if (serverIdle.getAsBoolean()) {
      transactionMayHaveChanged();
    }
    if (settingsInTransaction) {
      return translated(call);
    }
    T result = translated(carrying);
    settingsInTransaction = true;
    return result;
  }

  /**
   * Right before a batch inside a transaction, in that transaction: locks the fence row and sets
   * the registration's batch marker, so that the batch's rows (which check that marker only) may
   * write. Refuses the batch if the fence does not name this lease.
   */
  void verifyBatch() throws SQLException {
    boolean verified;
    try (PreparedStatement verify = delegate.prepareStatement(guards.verify());
        ResultSet row = verify.executeQuery()) {
      verified = row.next();
    }
    if (!verified) {
      classifyNoRows();
      throw new SQLException(
          "the fence row of \""
              + lease.resource()
              + "\" could not be locked for this batch; nothing was written");
    }
  }

  /**
   * A guarded write affected no row: throws if the fence does not name this lease (stale, or never
   * registered), else returns (no such row). The lease is marked lost when a newer holder
   * registered, and the observer hears of the rejection.
   *
   * @throws StaleTokenException if the fence names another holder, or none
   * @throws SQLException if the fence could not be read
   */
  public void classifyNoRows() throws SQLException {
    Rejections.classifyNoRows(delegate, fence.readFence(), lease, observer);
  }

  private void joinTransaction() throws SQLException {
    if (serverIdle.getAsBoolean()) {
      transactionMayHaveChanged();
    }
    if (triggerMode && !settingsInTransaction) {
      carrySettings();
      settingsInTransaction = true;
    }
  }

  private void carrySettings() throws SQLException {
    try (PreparedStatement settings = delegate.prepareStatement(fence.triggerSettings())) {
      settings.setString(1, lease.resource());
      settings.setString(2, Long.toString(lease.token().value()));
      settings.setString(3, lease.leaseId());
      settings.setString(4, guards.idleTimeout());
      settings.execute();
    }
  }

  /**
   * Trigger mode in auto-commit: the statement runs in a transaction of its own, whose
   * transaction-local settings end with it.
   */
  private <T> T inOwnTransaction(SqlCall<T> call) throws SQLException {
    delegate.setAutoCommit(false);
    try {
      carrySettings();
      T result = translated(call);
      delegate.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      try {
        delegate.rollback();
      } catch (SQLException rollback) {
        e.addSuppressed(rollback);
      }
      throw e;
    } finally {
      delegate.setAutoCommit(true);
    }
  }

  private <T> T translated(SqlCall<T> call) throws SQLException {
    try {
      return call.call();
    } catch (SQLException e) {
      throw Rejections.translated(e, lease, triggerMode, observer, fenceReader);
    }
  }

  /**
   * Opens a statement inside the scope: refused when the lease is known lost, and for updatable
   * result sets, whose rows the driver writes with SQL of its own that nothing guards.
   */
  private void opening(int resultSetConcurrency) throws SQLException {
    Rejections.checkHeld(lease);
    if (resultSetConcurrency == ResultSet.CONCUR_UPDATABLE) {
      throw FencedResultSet.updatableRefused();
    }
  }

  @Override
  public FencedStatement<Statement> createStatement() throws SQLException {
    return statement(ResultSet.CONCUR_READ_ONLY, () -> delegate.createStatement());
  }

  @Override
  public FencedStatement<Statement> createStatement(int type, int concurrency) throws SQLException {
    return statement(concurrency, () -> delegate.createStatement(type, concurrency));
  }

  @Override
  public FencedStatement<Statement> createStatement(int type, int concurrency, int holdability)
      throws SQLException {
    return statement(concurrency, () -> delegate.createStatement(type, concurrency, holdability));
  }

  private FencedStatement<Statement> statement(int concurrency, SqlCall<Statement> create)
      throws SQLException {
    opening(concurrency);
    return new FencedStatement<>(this, create.call(), Routing.PLAIN);
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(String sql)
      throws SQLException {
    opening(ResultSet.CONCUR_READ_ONLY);
    boolean mayControlTransaction = SqlLexer.mayControlTransaction(sql);
    String routed = routePlainSql(sql, mayControlTransaction);
    if (settingsRideAlong
        && routed.equals(sql)
        && !mayControlTransaction
        && SqlLexer.isOneStatement(sql)) {
      return new TriggerPreparedStatement(
          this, delegate.prepareStatement(sql), guards.triggerSettings(), sql);
    }
    return prepared(sql, routed, mayControlTransaction, r -> delegate.prepareStatement(r));
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(String sql, int keys)
      throws SQLException {
    return prepared(sql, ResultSet.CONCUR_READ_ONLY, r -> delegate.prepareStatement(r, keys));
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(String sql, int[] columns)
      throws SQLException {
    return prepared(sql, ResultSet.CONCUR_READ_ONLY, r -> delegate.prepareStatement(r, columns));
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(String sql, String[] columns)
      throws SQLException {
    return prepared(sql, ResultSet.CONCUR_READ_ONLY, r -> delegate.prepareStatement(r, columns));
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(
      String sql, int type, int concurrency) throws SQLException {
    return prepared(sql, concurrency, r -> delegate.prepareStatement(r, type, concurrency));
  }

  @Override
  public FencedPreparedStatement<PreparedStatement> prepareStatement(
      String sql, int type, int concurrency, int holdability) throws SQLException {
    return prepared(
        sql, concurrency, r -> delegate.prepareStatement(r, type, concurrency, holdability));
  }

  private FencedPreparedStatement<PreparedStatement> prepared(
      String sql, int concurrency, Prepare<PreparedStatement> prepare) throws SQLException {
    opening(concurrency);
    boolean mayControlTransaction = SqlLexer.mayControlTransaction(sql);
    return prepared(sql, routePlainSql(sql, mayControlTransaction), mayControlTransaction, prepare);
  }

  /**
   * Prepares plain SQL as routed: a statement the policy rewrote into its guarded form gets the
   * guarded statement's classification (zero rows while the fence names another holder is a
   * rejection, never a silent "no such row"); its batch rows carry the full guard.
   */
  private FencedPreparedStatement<PreparedStatement> prepared(
      String sql, String routed, boolean mayControlTransaction, Prepare<PreparedStatement> prepare)
      throws SQLException {
    PreparedStatement statement = prepare.prepare(routed);
    if (!routed.equals(sql)) {
      return new GuardedPreparedStatement(
          this, statement, GuardedSql.Guarded.checkedPerRow(routed), prepare);
    }
    return new FencedPreparedStatement<>(this, statement, Routing.of(mayControlTransaction));
  }

  /**
   * Prepares SQL on the wrapped connection as the caller asked (its key request, result set type,
   * concurrency and holdability), past the plain SQL policy.
   */
  @FunctionalInterface
  interface Prepare<S> {
    S prepare(String sql) throws SQLException;
  }

  @Override
  public FencedCallableStatement prepareCall(String sql) throws SQLException {
    return called(sql, ResultSet.CONCUR_READ_ONLY, r -> delegate.prepareCall(r));
  }

  @Override
  public FencedCallableStatement prepareCall(String sql, int type, int concurrency)
      throws SQLException {
    return called(sql, concurrency, r -> delegate.prepareCall(r, type, concurrency));
  }

  @Override
  public FencedCallableStatement prepareCall(String sql, int type, int concurrency, int holdability)
      throws SQLException {
    return called(sql, concurrency, r -> delegate.prepareCall(r, type, concurrency, holdability));
  }

  /** A call may end the transaction (a procedure that commits); a rewritten write is guarded. */
  private FencedCallableStatement called(
      String sql, int concurrency, Prepare<CallableStatement> prepare) throws SQLException {
    opening(concurrency);
    String routed = routePlainSql(sql);
    return new FencedCallableStatement(
        this,
        prepare.prepare(routed),
        routed.equals(sql) ? Routing.MAY_CONTROL_TRANSACTION : Routing.GUARDED);
  }

  @Override
  public String nativeSQL(String sql) throws SQLException {
    return delegate.nativeSQL(routePlainSql(sql));
  }

  @Override
  public FencedDatabaseMetaData getMetaData() throws SQLException {
    return new FencedDatabaseMetaData(this, delegate.getMetaData());
  }

  @Override
  public void commit() throws SQLException {
    transactionMayHaveChanged();
    delegate.commit();
  }

  @Override
  public void rollback() throws SQLException {
    transactionMayHaveChanged();
    delegate.rollback();
  }

  @Override
  public void rollback(Savepoint savepoint) throws SQLException {
    transactionMayHaveChanged();
    delegate.rollback(savepoint);
  }

  @Override
  public void setAutoCommit(boolean autoCommit) throws SQLException {
    transactionMayHaveChanged();
    delegate.setAutoCommit(autoCommit);
  }

  @Override
  public void close() throws SQLException {
    transactionMayHaveChanged();
    delegate.close();
  }

  @Override
  public String toString() {
    return "FencedConnection[" + lease + ", " + delegate + "]";
  }
}
