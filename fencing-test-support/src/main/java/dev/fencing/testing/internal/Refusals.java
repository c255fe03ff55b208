package dev.fencing.testing.internal;

import dev.fencing.core.LeaseLostException;
import dev.fencing.jdbc.LeaseLostSQLException;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/** Finds, in what a piece of code threw, the documented refusal of a stale write. */
public final class Refusals {

  /** Spring's translation of both refusals, found by name: the kit does not depend on Spring. */
  static final String SPRING_STALE_LEASE_WRITE = "dev.fencing.spring.StaleLeaseWriteException";

  private Refusals() {}

  /**
   * Returns the first refusal in {@code thrown}, its causes and suppressed exceptions: a {@link
   * StaleTokenException}, a {@link LeaseLostSQLException}, a {@link LeaseLostException}, Spring's
   * {@code StaleLeaseWriteException}, or an {@link SQLException} with the SQLState of a stale
   * token, a write without a token (the strict trigger) or a lost lease.
   *
   * @param thrown what the code threw
   * @return the refusal, or empty
   */
  public static Optional<Throwable> find(Throwable thrown) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    Deque<Throwable> todo = new ArrayDeque<>();
    todo.add(thrown);
    while (!todo.isEmpty()) {
      Throwable t = todo.poll();
      if (!seen.add(t)) {
        continue;
      }
      if (isRefusal(t)) {
        return Optional.of(t);
      }
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
      if (t instanceof SQLException sql && sql.getNextException() != null) {
        todo.add(sql.getNextException());
      }
      Collections.addAll(todo, t.getSuppressed());
    }
    return Optional.empty();
  }

  private static boolean isRefusal(Throwable t) {
    if (t instanceof StaleTokenException
        || t instanceof LeaseLostSQLException
        || t instanceof LeaseLostException) {
      return true;
    }
    for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals(SPRING_STALE_LEASE_WRITE)) {
        return true;
      }
    }
    if (t instanceof SQLException sql) {
      String state = sql.getSQLState();
      return FenceSchema.SQLSTATE_STALE_TOKEN.equals(state)
          || FenceSchema.SQLSTATE_NO_TOKEN.equals(state)
          || FenceSchema.SQLSTATE_LEASE_LOST.equals(state);
    }
    return false;
  }
}
