package dev.fencing.jdbc;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.internal.FenceDialect;
import dev.fencing.jdbc.internal.FenceGuards;
import dev.fencing.jdbc.internal.FencedConnection;
import dev.fencing.jdbc.internal.PlainDmlGuard;
import dev.fencing.jdbc.internal.PlainSqlPolicy;
import dev.fencing.jdbc.internal.Rejections;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.Optional;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Wraps any {@link DataSource} (HikariCP or other) so that connections taken inside a {@link
 * Fencing} scope are fenced by the scope's lease, and existing DAOs need no changes.
 *
 * <p>Inside a scope, a connection knows its lease: {@link GuardedStatements} and {@link
 * dev.fencing.jdbc.jooq.FencedDsl} write the lease's registration into the SQL they prepare, every
 * JDBC call that opens or executes a statement fails fast with {@link LeaseLostSQLException} once
 * the lease is known lost, and the fence's refusals (guarded statements, enforcement trigger) are
 * reported as {@link StaleTokenException}. A transaction that locks the fence row also gets the
 * lease time as its {@code idle_in_transaction_session_timeout}, so a holder frozen inside it
 * cannot block its successor for much longer than one lease time.
 *
 * <p>Everything the library sets in the database is transaction-local: a connection goes back to
 * the pool exactly as it came out, whether the work committed, rolled back, failed, or was closed
 * with auto-commit off.
 *
 * <p>With {@link FenceOptions#triggerMode()}, statements also carry the registration as the
 * transaction-local settings {@code fencing.resource}, {@code fencing.token} and {@code
 * fencing.lease_id} that the enforcement trigger reads: one extra round trip per transaction. In
 * auto-commit mode each statement runs in a transaction of its own (settings, statement, commit:
 * two extra round trips per statement).
 *
 * <p>Outside a scope, connections are handed out unchanged. Connections must not be shared between
 * threads or kept past the scope. Session-pooling proxies in transaction mode (such as PgBouncer)
 * are not supported.
 */
public final class FencedDataSource implements DataSource {

  private final DataSource delegate;
  private final FenceOptions options;
  private volatile FenceDialect dialect;
  private final ResourceFence fence;
  private final PlainSqlPolicy plainSql = this::guardPlainSql;
  private volatile FenceDialect.PlainSqlGuard plainDmlGuard;
  private final FenceObserver observer;
  private volatile LeaseSql lastLease;

  private FencedDataSource(DataSource delegate, FenceOptions options, FenceObserver observer) {
    if (options.plainSql() == FenceOptions.PlainSql.REWRITE) {
      PlainDmlGuard.requireRewriter();
    }
    this.delegate = delegate;
    this.options = options;
    this.observer = observer;
    this.fence = new ResourceFence(delegate, options);
  }

  /**
   * Wraps a data source.
   *
   * @param delegate the data source to wrap, typically a connection pool
   * @param options where the fence lives, and whether to carry settings for the trigger
   * @return the fenced data source
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if {@link FenceOptions#plainSql()} is {@code REWRITE} and jOOQ,
   *     which the rewriting needs, cannot be loaded
   */
  public static FencedDataSource wrap(DataSource delegate, FenceOptions options) {
    Objects.requireNonNull(delegate, "delegate");
    Objects.requireNonNull(options, "options");
    return new FencedDataSource(delegate, options, FenceObserver.NONE);
  }

  /**
   * Wraps a data source and reports rejected stale attempts to {@code observer}.
   *
   * @param delegate the data source to wrap, typically a connection pool
   * @param options where the fence lives, and whether to carry settings for the trigger
   * @param observer told of every stale attempt this data source rejects
   * @return the fenced data source
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if {@link FenceOptions#plainSql()} is {@code REWRITE} and jOOQ,
   *     which the rewriting needs, cannot be loaded
   */
  public static FencedDataSource wrap(
      DataSource delegate, FenceOptions options, FenceObserver observer) {
    Objects.requireNonNull(delegate, "delegate");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(observer, "observer");
    return new FencedDataSource(delegate, options, observer);
  }

  /** {@return the observer told of rejected stale attempts} */
  public FenceObserver observer() {
    return observer;
  }

  /** {@return the resource fence in the same database, for {@link FencedLeaseManager}} */
  public ResourceFence fence() {
    return fence;
  }

  /** {@return the wrapped data source} */
  public DataSource delegate() {
    return delegate;
  }

  /** {@return the fence options} */
  public FenceOptions options() {
    return options;
  }

  /**
   * Returns a connection; inside a scope, one fenced by the scope's lease.
   *
   * @throws LeaseLostSQLException if the scope's lease is already known lost (no connection is
   *     taken)
   * @throws java.sql.SQLFeatureNotSupportedException inside a scope, if the database is neither
   *     PostgreSQL nor MariaDB, or trigger mode is on with MariaDB (refused there: docs/mariadb.md)
   * @throws SQLException if the wrapped data source or the database failed
   */
  @Override
  public Connection getConnection() throws SQLException {
    Optional<Lease> lease = Fencing.currentLease();
    if (lease.isEmpty()) {
      return delegate.getConnection();
    }
    Rejections.checkHeld(lease.get());
    return fenced(delegate.getConnection(), lease.get());
  }

  /**
   * Returns a connection for the given user; inside a scope, one fenced by the scope's lease.
   *
   * @throws LeaseLostSQLException if the scope's lease is already known lost (no connection is
   *     taken)
   * @throws SQLException if the wrapped data source or the database failed
   */
  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    Optional<Lease> lease = Fencing.currentLease();
    if (lease.isEmpty()) {
      return delegate.getConnection(username, password);
    }
    Rejections.checkHeld(lease.get());
    return fenced(delegate.getConnection(username, password), lease.get());
  }

  private Connection fenced(Connection connection, Lease lease) throws SQLException {
    try {
      knowFencedTables(connection);
      return new FencedConnection(
          connection,
          lease,
          dialect,
          boundSql(lease),
          options.triggerMode(),
          plainSql,
          observer,
          fence::currentToken);
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  /**
   * Reads again which tables are fenced (have a {@code fence_token} column, and which of them have
   * the enforcement trigger). The set is read from the catalog at the first scoped connection; call
   * this after fencing more tables while the application runs.
   *
   * @throws SQLException if the catalog could not be read
   */
  public void refreshFencedTables() throws SQLException {
    try (Connection catalog = delegate.getConnection()) {
      plainDmlGuard = readPlainDmlGuard(catalog);
    }
  }

  /**
   * Plain SQL a DAO sends in a scope: guarded when it writes a fenced table and the rewriter can
   * prove its guarded form, refused when it cannot, unchanged otherwise. SQL that already carries
   * this lease's fence predicate (rendered by {@link dev.fencing.jdbc.jooq.FencedDsl}) is the
   * library's own and goes through as written.
   */
  private String guardPlainSql(String sql, FencedConnection connection) throws SQLException {
    if (sql.contains(connection.guards().fenceHeld())) {
      return sql;
    }
    PlainDmlGuard.Result result = plainDmlGuard.rewrite(sql, connection.lease());
    if (result instanceof PlainDmlGuard.Refused refused) {
      throw refused.toException();
    }
    return result instanceof PlainDmlGuard.Guarded guarded ? guarded.sql() : sql;
  }

  private FenceDialect.PlainSqlGuard readPlainDmlGuard(Connection catalog) throws SQLException {
    return dialect(catalog)
        .plainSqlGuard(
            catalog,
            options.schema(),
            options.triggerMode(),
            options.plainSql() == FenceOptions.PlainSql.REWRITE);
  }

  /**
   * The dialect of the wrapped database, read from the first connection's metadata; options it
   * cannot honour are refused there.
   */
  private FenceDialect dialect(Connection connection) throws SQLException {
    FenceDialect known = dialect;
    if (known == null) {
      known = FenceDialect.of(connection, options.schema());
      known.checkOptions(options.triggerMode());
      dialect = known;
    }
    return known;
  }

  /**
   * Reads the fenced tables at the first scoped connection, on that connection before it is wrapped
   * (a second connection could wait forever on a pool of one).
   */
  private void knowFencedTables(Connection connection) throws SQLException {
    if (plainDmlGuard == null) {
      synchronized (this) {
        if (plainDmlGuard == null) {
          plainDmlGuard = readPlainDmlGuard(connection);
        }
      }
    }
  }

  private FenceGuards boundSql(Lease lease) {
    LeaseSql last = lastLease;
    if (last != null && last.lease() == lease) {
      return last.sql();
    }
    FenceGuards bound = dialect.bind(lease);
    lastLease = new LeaseSql(lease, bound);
    return bound;
  }

  private record LeaseSql(Lease lease, FenceGuards sql) {}

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return delegate.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    delegate.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    delegate.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return delegate.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return delegate.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    return delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }
}
