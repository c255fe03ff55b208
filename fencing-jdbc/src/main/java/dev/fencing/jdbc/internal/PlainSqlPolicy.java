package dev.fencing.jdbc.internal;

import java.sql.SQLException;

/**
 * What happens to plain SQL that a DAO sends through a fenced connection inside a scope: every
 * string given to {@code prepareStatement}, {@code prepareCall}, {@code nativeSQL}, and to a
 * statement's {@code execute*} and {@code addBatch}, passes through here exactly once before the
 * driver sees it. A policy may return the SQL unchanged, return a guarded rewrite of it, or refuse
 * it by throwing.
 */
@FunctionalInterface
public interface PlainSqlPolicy {

  /** Sends plain SQL as written. */
  PlainSqlPolicy UNCHANGED = (sql, connection) -> sql;

  /**
   * Routes one plain SQL string.
   *
   * @param sql the SQL as the DAO wrote it
   * @param connection the fenced connection: its lease, guarded SQL and mode
   * @return the SQL to send
   * @throws SQLException to refuse the statement
   */
  String route(String sql, FencedConnection connection) throws SQLException;
}
