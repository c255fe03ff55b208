package dev.fencing.jdbc.internal;

import java.sql.CallableStatement;

/** A callable statement of a fenced connection: its SQL went through the plain SQL policy. */
public final class FencedCallableStatement extends DelegatingCallableStatement {

  FencedCallableStatement(
      FencedConnection connection, CallableStatement delegate, Routing routing) {
    super(connection, delegate, routing);
  }
}
