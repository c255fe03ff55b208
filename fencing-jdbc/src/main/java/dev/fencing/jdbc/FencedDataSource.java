package dev.fencing.jdbc;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.internal.FenceSql;
import dev.fencing.jdbc.internal.FencedProxies;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Wraps any {@link DataSource} (HikariCP or other) so that connections taken inside a {@link
 * Fencing} scope carry the scope's registration to PostgreSQL, and existing DAOs are fenced without
 * changes.
 *
 * <p>Inside a scope, a connection's session settings {@code fencing.resource}, {@code
 * fencing.token} and {@code fencing.lease_id} name the lease (read by guarded statements and by the
 * enforcement trigger), and {@code idle_in_transaction_session_timeout} is the lease time, so a
 * holder frozen inside an open transaction cannot block its successor for much longer than one
 * lease time. Settings are sent only when a pooled connection's last registration differs, in one
 * round trip at checkout; never per statement. Outside a scope, connections are handed out plain,
 * with any settings left by an earlier scope cleared.
 *
 * <p>Connections must not be shared between threads or kept past the scope, and must not be reset
 * with {@code DISCARD ALL} or {@code RESET ALL} (that clears the settings; guarded statements then
 * fail and lenient triggers let writes through). Session-pooling proxies in transaction mode (such
 * as PgBouncer) are not supported.
 */
public final class FencedDataSource implements DataSource {

  private static final String SYNC =
      "SELECT set_config('fencing.resource', ?, false), set_config('fencing.token', ?, false),"
          + " set_config('fencing.lease_id', ?, false),"
          + " set_config('idle_in_transaction_session_timeout', ?, false)";
  private static final String CLEAR =
      "SELECT set_config('fencing.resource', '', false), set_config('fencing.token', '', false),"
          + " set_config('fencing.lease_id', '', false),"
          + " set_config('idle_in_transaction_session_timeout', (SELECT reset_val FROM pg_settings"
          + " WHERE name = 'idle_in_transaction_session_timeout'), false)";

  private final DataSource delegate;
  private final FenceOptions options;
  private final FenceSql sql;
  private final ResourceFence fence;
  private final Map<Connection, String> settingsByConnection =
      Collections.synchronizedMap(new WeakHashMap<>());

  private FencedDataSource(DataSource delegate, FenceOptions options) {
    this.delegate = delegate;
    this.options = options;
    this.sql = new FenceSql(options.schema());
    this.fence = new ResourceFence(delegate, options);
  }

  /**
   * Wraps a data source.
   *
   * @param delegate the data source to wrap, typically a connection pool
   * @param options where the fence lives
   * @return the fenced data source
   * @throws NullPointerException if an argument is null
   */
  public static FencedDataSource wrap(DataSource delegate, FenceOptions options) {
    Objects.requireNonNull(delegate, "delegate");
    Objects.requireNonNull(options, "options");
    return new FencedDataSource(delegate, options);
  }

  /** Returns the resource fence in the same database, for {@link FencedLeaseManager}. */
  public ResourceFence fence() {
    return fence;
  }

  /** Returns the wrapped data source. */
  public DataSource delegate() {
    return delegate;
  }

  /** Returns the fence options. */
  public FenceOptions options() {
    return options;
  }

  /**
   * Returns a connection; inside a scope, one fenced by the scope's lease.
   *
   * @throws StaleTokenException if the scope's lease is already known lost (no connection is taken)
   * @throws SQLException if the wrapped data source or the database failed
   */
  @Override
  public Connection getConnection() throws SQLException {
    Optional<Lease> lease = Fencing.currentLease();
    if (lease.isPresent()) {
      FencedProxies.requireHeld(lease.get());
    }
    return prepare(delegate.getConnection(), lease);
  }

  /**
   * Returns a connection for the given user; inside a scope, one fenced by the scope's lease.
   *
   * @throws StaleTokenException if the scope's lease is already known lost (no connection is taken)
   * @throws SQLException if the wrapped data source or the database failed
   */
  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    Optional<Lease> lease = Fencing.currentLease();
    if (lease.isPresent()) {
      FencedProxies.requireHeld(lease.get());
    }
    return prepare(delegate.getConnection(username, password), lease);
  }

  private Connection prepare(Connection connection, Optional<Lease> lease) throws SQLException {
    try {
      Connection physical = physical(connection);
      String wanted = lease.map(FencedDataSource::settingsKey).orElse("");
      String current = settingsByConnection.getOrDefault(physical, "");
      if (!wanted.equals(current)) {
        if (lease.isPresent()) {
          Lease held = lease.get();
          try (PreparedStatement sync = connection.prepareStatement(SYNC)) {
            sync.setString(1, held.resource());
            sync.setString(2, Long.toString(held.token().value()));
            sync.setString(3, held.leaseId());
            sync.setString(4, held.leaseTime().toMillis() + "ms");
            sync.execute();
          }
        } else {
          try (PreparedStatement clear = connection.prepareStatement(CLEAR)) {
            clear.execute();
          }
        }
        if (!connection.getAutoCommit()) {
          connection.commit();
        }
        settingsByConnection.put(physical, wanted);
      }
      return lease.isPresent() ? FencedProxies.wrap(connection, lease.get(), sql) : connection;
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  private static Connection physical(Connection connection) {
    try {
      return connection.isWrapperFor(Connection.class)
          ? connection.unwrap(Connection.class)
          : connection;
    } catch (SQLException e) {
      return connection;
    }
  }

  private static String settingsKey(Lease lease) {
    return lease.resource()
        + '/'
        + lease.token().value()
        + '/'
        + lease.leaseId()
        + '/'
        + lease.leaseTime().toMillis();
  }

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
