package dev.fencing.jdbc.internal;

import java.sql.PreparedStatement;

/**
 * A prepared statement of a fenced connection: its SQL went through the plain SQL policy when it
 * was prepared.
 *
 * @param <S> the wrapped statement's type
 */
public class FencedPreparedStatement<S extends PreparedStatement>
    extends DelegatingPreparedStatement<S> {

  FencedPreparedStatement(FencedConnection connection, S delegate, Routing routing) {
    super(connection, delegate, routing);
  }
}
