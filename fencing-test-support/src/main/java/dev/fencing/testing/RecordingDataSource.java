package dev.fencing.testing;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Wraps a connection pool and records the SQL sent through it, for the reports of {@link
 * StaleWriterProbe}: put it between the pool and the {@link dev.fencing.jdbc.FencedDataSource}, and
 * a probe's report shows the SQL the fenced wrapper sent to the database (after its rewriting)
 * while the stale holder ran.
 *
 * <pre>{@code
 * FencedDataSource db = FencedDataSource.wrap(RecordingDataSource.wrap(pool), FenceOptions.defaults());
 * }</pre>
 *
 * <p>Only SQL that passes through this data source is recorded: a statement on a connection taken
 * from the pool itself, or on the driver's connection reached by {@code unwrap}, is not, which is
 * how a report tells a write that went around the wrapper from one the wrapper let through. For
 * tests only: it keeps the last {@value #CAPACITY} statements in memory.
 */
public final class RecordingDataSource implements DataSource {

  /** How many statements are kept; older ones are dropped. */
  public static final int CAPACITY = 1000;

  /**
   * Put before a statement recorded on a connection taken outside any {@link
   * dev.fencing.jdbc.Fencing} scope (on another thread, or before the scope began): the wrapper
   * handed such a connection out unfenced.
   */
  public static final String OUTSIDE_SCOPE = "-- outside any fencing scope: ";

  private final DataSource delegate;
  private final List<String> recorded = new ArrayList<>();
  private long dropped;

  private RecordingDataSource(DataSource delegate) {
    this.delegate = delegate;
  }

  /**
   * Wraps a data source.
   *
   * @param delegate the pool
   * @return the recording data source
   * @throws NullPointerException if {@code delegate} is null
   */
  public static RecordingDataSource wrap(DataSource delegate) {
    return new RecordingDataSource(Objects.requireNonNull(delegate, "delegate"));
  }

  /** {@return the wrapped data source} */
  public DataSource delegate() {
    return delegate;
  }

  /**
   * Returns a position in the record, to read what came after with {@link #since(long)}.
   *
   * @return the number of statements recorded so far
   */
  public synchronized long mark() {
    return dropped + recorded.size();
  }

  /**
   * Returns the statements recorded after {@code mark}, oldest first (those dropped for capacity
   * are missing).
   *
   * @param mark a value of {@link #mark()}
   * @return the SQL
   */
  public synchronized List<String> since(long mark) {
    int from = (int) Math.max(0, mark - dropped);
    return from >= recorded.size()
        ? List.of()
        : List.copyOf(recorded.subList(from, recorded.size()));
  }

  private synchronized void record(String sql, boolean scoped) {
    if (recorded.size() == CAPACITY) {
      recorded.remove(0);
      dropped++;
    }
    recorded.add(scoped ? sql : OUTSIDE_SCOPE + sql);
  }

  @Override
  public Connection getConnection() throws SQLException {
    return connection(delegate.getConnection());
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return connection(delegate.getConnection(username, password));
  }

  private Connection connection(Connection real) {
    return proxy(Connection.class, real, dev.fencing.jdbc.Fencing.currentLease().isPresent());
  }

  private <T> T proxy(Class<T> type, Object real, boolean scoped) {
    return type.cast(
        Proxy.newProxyInstance(
            RecordingDataSource.class.getClassLoader(),
            new Class<?>[] {type},
            new Handler(real, scoped)));
  }

  /** Records SQL given to connections and statements, and wraps the statements they return. */
  private final class Handler implements InvocationHandler {
    private final Object real;
    private final boolean scoped;

    Handler(Object real, boolean scoped) {
      this.real = real;
      this.scoped = scoped;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("unwrap") && args != null && ((Class<?>) args[0]).isInstance(proxy)) {
        return proxy;
      }
      if (name.equals("isWrapperFor") && args != null && ((Class<?>) args[0]).isInstance(proxy)) {
        return true;
      }
      if (args != null && args.length > 0 && args[0] instanceof String sql && recordsSql(name)) {
        record(sql, scoped);
      }
      Object result;
      try {
        result = method.invoke(real, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (result instanceof CallableStatement && name.equals("prepareCall")) {
        return proxy(CallableStatement.class, result, scoped);
      }
      if (result instanceof PreparedStatement && name.equals("prepareStatement")) {
        return proxy(PreparedStatement.class, result, scoped);
      }
      if (result instanceof Statement && name.equals("createStatement")) {
        return proxy(Statement.class, result, scoped);
      }
      return result;
    }

    private boolean recordsSql(String method) {
      return method.startsWith("prepare")
          || method.startsWith("execute")
          || method.equals("addBatch")
          || method.equals("nativeSQL");
    }
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
    return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }
}
