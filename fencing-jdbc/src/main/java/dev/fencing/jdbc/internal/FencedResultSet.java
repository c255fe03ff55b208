package dev.fencing.jdbc.internal;

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
