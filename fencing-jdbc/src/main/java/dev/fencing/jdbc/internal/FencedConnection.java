package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.SQLException;

/** A connection handed out inside a fencing scope: it knows its lease and its fence. */
public interface FencedConnection extends Connection {

  /** Returns the lease the connection's settings name. */
  Lease fencingLease();

  /** Returns the guarded SQL of this connection's lease. */
  FenceSql.Bound fenceSql();

  /**
   * Makes sure the fence row is locked for the rest of the current transaction and names this
   * connection's lease; does nothing in auto-commit mode or when already done in this transaction.
   *
   * @throws SQLException if the fence names another holder ({@code StaleTokenException}) or the
   *     database failed
   */
  void verifyFenceForTransaction() throws SQLException;

  /**
   * Classifies a write that affected no row: throws if the fence no longer names this lease, else
   * returns normally (no such row).
   *
   * @throws SQLException a {@code StaleTokenException} if stale, or a database error
   */
  void classifyNoRows() throws SQLException;
}
