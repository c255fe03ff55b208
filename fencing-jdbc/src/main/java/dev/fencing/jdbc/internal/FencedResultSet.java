package dev.fencing.jdbc.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.ResultSet;
import java.sql.SQLFeatureNotSupportedException;

/**
 * A result set handed out inside a fencing scope: {@link #getStatement()} is the fenced statement
 * that produced it (null for metadata and other result sets no statement produced), and it never
 * writes rows: the driver would write them with SQL of its own, which no guard covers.
 */
public final class FencedResultSet extends DelegatingResultSet {

  private final FencedStatement<?> statement;

  FencedResultSet(FencedStatement<?> statement, ResultSet delegate) {
    super(delegate);
    this.statement = statement;
  }

  /** The refusal of an updatable result set inside a scope. */
  static SQLFeatureNotSupportedException updatableRefused() {
    return new SQLFeatureNotSupportedException(
        "updatable result sets (ResultSet.CONCUR_UPDATABLE) are refused inside a fencing scope:"
            + " the driver writes their rows with SQL of its own, which no fence guards; write"
            + " with an UPDATE, INSERT or DELETE statement (or GuardedStatements) instead");
  }

  /**
   * An array whose result sets ({@link java.sql.Array#getResultSet()}) are fenced: the driver's
   * would name a statement of its own connection. Null stays null.
   */
  static java.sql.Array fenced(java.sql.Array raw) {
    if (raw == null) {
      return null;
    }
    return (java.sql.Array)
        Proxy.newProxyInstance(
            FencedResultSet.class.getClassLoader(),
            new Class<?>[] {java.sql.Array.class},
            (proxy, method, args) -> {
              Object result;
              try {
                result = method.invoke(raw, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              return result instanceof ResultSet rows ? new FencedResultSet(null, rows) : result;
            });
  }

  @Override
  public FencedStatement<?> getStatement() {
    return statement;
  }

  @Override
  Object wrapObject(Object raw) {
    return raw instanceof ResultSet rows ? new FencedResultSet(statement, rows) : raw;
  }

  @Override
  public void insertRow() throws SQLFeatureNotSupportedException {
    throw updatableRefused();
  }

  @Override
  public void updateRow() throws SQLFeatureNotSupportedException {
    throw updatableRefused();
  }

  @Override
  public void deleteRow() throws SQLFeatureNotSupportedException {
    throw updatableRefused();
  }

  @Override
  public String toString() {
    return "Fenced" + delegate;
  }
}
