package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.StaleTokenException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Connections and statements handed out inside a fencing scope. They fail fast when the lease is
 * already known lost, report the enforcement trigger's rejection as a {@link StaleTokenException},
 * and, for guarded statements, classify writes that affected no row.
 */
public final class FencedProxies {

  private static final Pattern DETAIL =
      Pattern.compile("resource=([A-Za-z0-9_.:/-]+);attempted=(\\d+);current=(\\d+)");

  private FencedProxies() {}

  /**
   * Wraps a connection of a fencing scope.
   *
   * @param delegate the pooled connection
   * @param lease the scope's lease
   * @param fence the fence's SQL
   * @param bound the guarded SQL of {@code lease}
   * @param carrySettings whether statements must carry the registration as settings for the
   *     enforcement trigger: transaction-local inside transactions, session-level in auto-commit
   *     mode (then cleared when the connection is closed)
   */
  public static FencedConnection wrap(
      Connection delegate,
      Lease lease,
      FenceSql fence,
      FenceSql.Bound bound,
      boolean carrySettings) {
    ConnectionHandler handler = new ConnectionHandler(delegate, lease, fence, bound, carrySettings);
    FencedConnection proxy =
        (FencedConnection)
            Proxy.newProxyInstance(
                FencedConnection.class.getClassLoader(),
                new Class<?>[] {FencedConnection.class},
                handler);
    handler.proxy = proxy;
    return proxy;
  }

  /**
   * Prepares a guarded statement: executed alone it runs the fused form; rows added with {@code
   * addBatch} inside a transaction go to the row-guarded form, after the fence row was locked once
   * for the transaction. Row counts of zero are classified.
   */
  public static PreparedStatement guarded(FencedConnection connection, FenceSql.Guarded sql)
      throws SQLException {
    PreparedStatement statement = connection.prepareStatement(sql.fused());
    StatementHandler handler = (StatementHandler) Proxy.getInvocationHandler(statement);
    handler.guarded = sql;
    return statement;
  }

  /** Throws a {@link StaleTokenException} if the lease is already known not to be held. */
  public static void requireHeld(Lease lease) throws StaleTokenException {
    if (!lease.isHeld()) {
      throw new StaleTokenException(
          "lease on \""
              + lease.resource()
              + "\" with token "
              + lease.token()
              + " is no longer held"
              + lease.lossReason().map(reason -> " (" + reason + ")").orElse("")
              + "; the write was rejected before reaching the database",
          lease.resource(),
          lease.token().value(),
          0,
          null);
    }
  }

  /** Returns the exception as a {@link StaleTokenException} if the database rejected a token. */
  public static SQLException translate(SQLException failure) {
    if (failure instanceof StaleTokenException) {
      return failure;
    }
    for (Throwable t = failure; t != null; ) {
      if (t instanceof SQLException sql
          && StaleTokenException.SQL_STATE.equals(sql.getSQLState())) {
        Matcher detail = DETAIL.matcher(String.valueOf(sql.getMessage()));
        if (detail.find()) {
          return new StaleTokenException(
              firstLine(sql.getMessage()),
              detail.group(1),
              Long.parseLong(detail.group(2)),
              Long.parseLong(detail.group(3)),
              failure);
        }
        return new StaleTokenException(firstLine(sql.getMessage()), null, 0, 0, failure);
      }
      if (t instanceof SQLException sql && sql.getNextException() != null) {
        t = sql.getNextException();
      } else {
        t = t.getCause();
      }
    }
    return failure;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "stale fencing token";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }

  private static Object invokeDelegate(Object target, Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SQLException sql) {
        throw translate(sql);
      }
      throw cause;
    }
  }

  private static final String SETTINGS =
      "SELECT set_config('fencing.resource', ?, ?), set_config('fencing.token', ?, ?),"
          + " set_config('fencing.lease_id', ?, ?)";
  private static final String CLEAR_SETTINGS =
      "SELECT set_config('fencing.resource', '', false), set_config('fencing.token', '', false),"
          + " set_config('fencing.lease_id', '', false)";

  private static final class ConnectionHandler implements InvocationHandler {
    private final Connection delegate;
    private final Lease lease;
    private final FenceSql fence;
    private final FenceSql.Bound sql;
    private final boolean carrySettings;
    private FencedConnection proxy;
    private boolean verifiedInTransaction;
    private boolean settingsInTransaction;
    private boolean settingsInSession;

    ConnectionHandler(
        Connection delegate,
        Lease lease,
        FenceSql fence,
        FenceSql.Bound sql,
        boolean carrySettings) {
      this.delegate = delegate;
      this.lease = lease;
      this.fence = fence;
      this.sql = sql;
      this.carrySettings = carrySettings;
    }

    /** Makes the registration visible to the enforcement trigger before a statement runs. */
    void carrySettings() throws SQLException {
      if (!carrySettings || settingsInSession || settingsInTransaction) {
        return;
      }
      boolean local = !delegate.getAutoCommit();
      try (PreparedStatement settings = delegate.prepareStatement(SETTINGS)) {
        settings.setString(1, lease.resource());
        settings.setBoolean(2, local);
        settings.setString(3, Long.toString(lease.token().value()));
        settings.setBoolean(4, local);
        settings.setString(5, lease.leaseId());
        settings.setBoolean(6, local);
        settings.execute();
      }
      if (local) {
        settingsInTransaction = true;
      } else {
        settingsInSession = true;
      }
    }

    private void close() throws SQLException {
      if (settingsInSession) {
        settingsInSession = false;
        try (Statement clear = delegate.createStatement()) {
          clear.execute(CLEAR_SETTINGS);
        } catch (SQLException e) {
          // The settings must not outlive the scope: a connection that cannot be cleared is
          // closed for good, so the pool discards it instead of lending it out as this lease.
          try {
            delegate.unwrap(Connection.class).close();
          } catch (SQLException closing) {
            e.addSuppressed(closing);
          }
        }
      }
      delegate.close();
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      switch (method.getName()) {
        case "fencingLease":
          return lease;
        case "fenceSql":
          return sql;
        case "unwrap":
          if (((Class<?>) args[0]).isInstance(proxy)) {
            return proxy;
          }
          return delegate.unwrap((Class<?>) args[0]);
        case "isWrapperFor":
          return ((Class<?>) args[0]).isInstance(proxy)
              || delegate.isWrapperFor((Class<?>) args[0]);
        case "equals":
          return self == args[0];
        case "hashCode":
          return System.identityHashCode(self);
        case "toString":
          return "FencedConnection[" + lease + ", " + delegate + "]";
        case "createStatement":
        case "prepareStatement":
        case "prepareCall":
          requireHeld(lease);
          return wrapStatement((Statement) invokeDelegate(delegate, method, args), method);
        case "close":
          verifiedInTransaction = false;
          settingsInTransaction = false;
          close();
          return null;
        case "commit":
        case "rollback":
        case "setAutoCommit":
          verifiedInTransaction = false;
          settingsInTransaction = false;
          return invokeDelegate(delegate, method, args);
        default:
          return invokeDelegate(delegate, method, args);
      }
    }

    private Object wrapStatement(Statement statement, Method factory) {
      Class<?> type = factory.getReturnType();
      Class<?> face =
          type == CallableStatement.class
              ? CallableStatement.class
              : type == PreparedStatement.class ? PreparedStatement.class : Statement.class;
      return Proxy.newProxyInstance(
          FencedConnection.class.getClassLoader(),
          new Class<?>[] {face},
          new StatementHandler(statement, this));
    }

    private void verifyForTransaction() throws SQLException {
      if (verifiedInTransaction || delegate.getAutoCommit()) {
        return;
      }
      requireHeld(lease);
      boolean holds;
      try (Statement statement = delegate.createStatement();
          ResultSet rows = statement.executeQuery(sql.verifyForTransaction())) {
        holds = rows.next();
      } catch (SQLException e) {
        throw translate(e);
      }
      if (!holds) {
        classifyNoRows();
        throw new StaleTokenException(
            "the fence for \"" + lease.resource() + "\" does not name this lease",
            lease.resource(),
            lease.token().value(),
            0,
            null);
      }
      verifiedInTransaction = true;
    }

    private void classifyNoRows() throws SQLException {
      try (PreparedStatement read = delegate.prepareStatement(fence.readFence())) {
        read.setString(1, lease.resource());
        try (ResultSet row = read.executeQuery()) {
          long current = 0;
          if (row.next()) {
            current = row.getLong(1);
            if (current == lease.token().value() && lease.leaseId().equals(row.getString(2))) {
              return;
            }
          }
          throw StaleTokenException.rejected(lease.resource(), lease.token(), current);
        }
      }
    }
  }

  private static final class StatementHandler implements InvocationHandler {
    private final Statement delegate;
    private final ConnectionHandler connection;
    private FenceSql.Guarded guarded;
    private Map<Object, Object[]> parameters;
    private Map<Object, Method> setters;
    private PreparedStatement batchStatement;

    StatementHandler(Statement delegate, ConnectionHandler connection) {
      this.delegate = delegate;
      this.connection = connection;
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      switch (name) {
        case "getConnection":
          return connection.proxy;
        case "unwrap":
          if (((Class<?>) args[0]).isInstance(self)) {
            return self;
          }
          return delegate.unwrap((Class<?>) args[0]);
        case "isWrapperFor":
          return ((Class<?>) args[0]).isInstance(self) || delegate.isWrapperFor((Class<?>) args[0]);
        case "equals":
          return self == args[0];
        case "hashCode":
          return System.identityHashCode(self);
        case "toString":
          return "Fenced" + delegate;
        default:
          break;
      }
      if (guarded != null) {
        Object handled = guardedOnly(method, args);
        if (handled != NOT_HANDLED) {
          return handled;
        }
      }
      if (!name.startsWith("execute")) {
        return invokeDelegate(delegate, method, args);
      }
      requireHeld(connection.lease);
      connection.carrySettings();
      Object result = invokeDelegate(delegate, method, args);
      if (guarded != null) {
        classify(name, delegate, result);
      }
      return result;
    }

    private static final Object NOT_HANDLED = new Object();

    /**
     * Batching of guarded statements. Until the first {@code addBatch} inside a transaction,
     * parameters go to the fused statement and are remembered; from then on the statement routes
     * everything to the row-guarded form, whose transaction has the fence row locked.
     */
    private Object guardedOnly(Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.startsWith("set") && args != null && args.length >= 2) {
        if (batchStatement != null) {
          return invokeDelegate(batchStatement, method, args);
        }
        if (parameters == null) {
          parameters = new HashMap<>();
          setters = new HashMap<>();
        }
        parameters.put(args[0], args.clone());
        setters.put(args[0], method);
        return invokeDelegate(delegate, method, args);
      }
      switch (name) {
        case "clearParameters":
          if (parameters != null) {
            parameters.clear();
            setters.clear();
          }
          if (batchStatement != null) {
            batchStatement.clearParameters();
          }
          return invokeDelegate(delegate, method, args);
        case "addBatch":
          if (args != null) {
            return invokeDelegate(delegate, method, args);
          }
          if (batchStatement == null) {
            if (connection.delegate.getAutoCommit()) {
              return invokeDelegate(delegate, method, args);
            }
            batchStatement = connection.delegate.prepareStatement(guarded.batched());
            if (parameters != null) {
              for (Map.Entry<Object, Object[]> parameter : parameters.entrySet()) {
                invokeDelegate(
                    batchStatement, setters.get(parameter.getKey()), parameter.getValue());
              }
              parameters = null;
              setters = null;
            }
          }
          batchStatement.addBatch();
          return null;
        case "clearBatch":
          if (batchStatement != null) {
            batchStatement.clearBatch();
          }
          return invokeDelegate(delegate, method, args);
        case "close":
          if (batchStatement != null) {
            batchStatement.close();
          }
          return invokeDelegate(delegate, method, args);
        default:
          break;
      }
      if (batchStatement == null || !name.startsWith("execute")) {
        return NOT_HANDLED;
      }
      if (connection.delegate.getAutoCommit()) {
        throw new SQLException(
            "this guarded statement was batched inside a transaction and cannot run in auto-commit"
                + " mode; prepare a new one");
      }
      requireHeld(connection.lease);
      connection.carrySettings();
      connection.verifyForTransaction();
      Object result = invokeDelegate(batchStatement, method, args);
      classify(name, batchStatement, result);
      return result;
    }

    private void classify(String name, Statement statement, Object result) throws SQLException {
      boolean noRows =
          switch (name) {
            case "executeUpdate" -> (Integer) result == 0;
            case "executeLargeUpdate" -> (Long) result == 0L;
            case "executeBatch" -> {
              boolean any = false;
              for (int count : (int[]) result) {
                any |= count == 0;
              }
              yield any;
            }
            case "executeLargeBatch" -> {
              boolean any = false;
              for (long count : (long[]) result) {
                any |= count == 0;
              }
              yield any;
            }
            case "execute" -> !(Boolean) result && statement.getUpdateCount() == 0;
            default -> false;
          };
      if (noRows) {
        connection.classifyNoRows();
      }
    }
  }
}
