package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import java.sql.Connection;

/** A connection handed out inside a fencing scope: it knows its lease and its fence. */
public interface FencedConnection extends Connection {

  /** Returns the lease of the scope the connection was taken in. */
  Lease fencingLease();

  /** Returns the guarded SQL of this connection's lease. */
  FenceSql.Bound fenceSql();
}
