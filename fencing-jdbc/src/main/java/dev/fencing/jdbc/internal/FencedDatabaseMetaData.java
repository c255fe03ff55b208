package dev.fencing.jdbc.internal;

import java.sql.DatabaseMetaData;
import java.sql.ResultSet;

/** The metadata of a fenced connection: its connection and result sets are the fenced ones. */
public final class FencedDatabaseMetaData extends DelegatingDatabaseMetaData {

  private final FencedConnection connection;

  FencedDatabaseMetaData(FencedConnection connection, DatabaseMetaData delegate) {
    super(delegate);
    this.connection = connection;
  }

  @Override
  public FencedConnection getConnection() {
    return connection;
  }

  @Override
  FencedResultSet wrap(ResultSet raw) {
    return raw == null ? null : new FencedResultSet(null, raw);
  }

  @Override
  public String toString() {
    return "Fenced" + delegate;
  }
}
