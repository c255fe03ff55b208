package dev.fencing.spring;

import dev.fencing.core.LeaseLostException;
import dev.fencing.jdbc.LeaseLostSQLException;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * This instance is no longer the holder of the lease its write runs under: the database refused the
 * write because a newer holder registered in the fence (SQLState {@code ZF001}, {@link
 * StaleTokenException}), or the JVM refused it before it reached the database because the lease is
 * already known lost ({@link LeaseLostException}, or its JDBC form {@link LeaseLostSQLException},
 * SQLState {@code ZF004}). Spring callers receive this one type wherever the refusal surfaced: a
 * statement, the begin or the commit of a transaction, a {@code JdbcTemplate}, a repository, a JPA
 * flush. Retrying cannot succeed; the transaction rolls back. Stop the work that needs the lease.
 */
public class StaleLeaseWriteException extends NonTransientDataAccessException {

  private static final long serialVersionUID = 1L;

  /** Who refused the write. */
  public enum RefusedBy {
    /** The database: a newer holder is registered in the fence ({@code ZF001}). */
    DATABASE,
    /** The JVM: the lease was already known lost, nothing was sent ({@code ZF004}). */
    JVM
  }

  /** Who refused the write. */
  private final RefusedBy refusedBy;

  /** The resource of the lease, or null when unknown. */
  private final String resource;

  /** The token the refused write carried, or null when unknown. */
  private final Long attemptedToken;

  /** The token the fence held when the database refused the write, or null. */
  private final Long currentToken;

  /**
   * Creates the exception; the figures are taken from the first refusal in {@code cause}'s chain.
   *
   * @param message the message
   * @param cause the failure whose cause chain holds the refusal (a {@link StaleTokenException}, a
   *     {@code ZF001} or {@code ZF004} {@link SQLException}, or a {@link LeaseLostException})
   */
  public StaleLeaseWriteException(String message, Throwable cause) {
    super(message, cause);
    Throwable refusal = findRefusal(cause);
    if (refusal instanceof StaleTokenException stale) {
      refusedBy = RefusedBy.DATABASE;
      resource = stale.resource();
      attemptedToken = stale.attemptedToken();
      currentToken = stale.currentToken();
    } else if (refusal instanceof LeaseLostSQLException lost) {
      refusedBy = RefusedBy.JVM;
      resource = lost.resource();
      attemptedToken = lost.attemptedToken();
      currentToken = null;
    } else if (refusal instanceof LeaseLostException lost) {
      refusedBy = RefusedBy.JVM;
      resource = lost.resource();
      attemptedToken = lost.token().value();
      currentToken = null;
    } else {
      refusedBy = whoRefused(refusal);
      resource = null;
      attemptedToken = null;
      currentToken = null;
    }
  }

  /** Returns who refused, for a refusal found by {@link #findRefusal}. */
  static RefusedBy whoRefused(Throwable refusal) {
    if (refusal instanceof LeaseLostException
        || (refusal instanceof SQLException sql
            && FenceSchema.SQLSTATE_LEASE_LOST.equals(sql.getSQLState()))) {
      return RefusedBy.JVM;
    }
    return RefusedBy.DATABASE;
  }

  /** {@return who refused the write} */
  public RefusedBy refusedBy() {
    return refusedBy;
  }

  /**
   * {@return the resource of the lease, when the refusal came through fencing-jdbc (a trigger's
   * {@code ZF001} raised on a connection that is not fenced carries none)}
   */
  public Optional<String> resource() {
    return Optional.ofNullable(resource);
  }

  /** {@return the fencing token the refused write carried, when known} */
  public OptionalLong attemptedToken() {
    return attemptedToken == null ? OptionalLong.empty() : OptionalLong.of(attemptedToken);
  }

  /**
   * {@return the token the fence held when the database refused the write (0 if none was
   * registered); empty when the JVM refused it, since nothing was asked of the database}
   */
  public OptionalLong currentToken() {
    return currentToken == null ? OptionalLong.empty() : OptionalLong.of(currentToken);
  }

  /**
   * {@return fencing-jdbc's description of the database's refusal (resource, attempted and current
   * token), when the database refused the write through a fenced connection}
   */
  public Optional<StaleTokenException> staleToken() {
    return inChain(StaleTokenException.class);
  }

  /** {@return the lease's loss report, when the JVM refused the write} */
  public Optional<LeaseLostException> leaseLost() {
    return inChain(LeaseLostException.class);
  }

  private <T extends Throwable> Optional<T> inChain(Class<T> type) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = getCause();
        t != null && seen.put(t, Boolean.TRUE) == null;
        t = t.getCause()) {
      if (type.isInstance(t)) {
        return Optional.of(type.cast(t));
      }
    }
    return Optional.empty();
  }

  /**
   * Returns the refusal in the chain of {@code failure} (its causes, and the chained exceptions of
   * each {@link SQLException}): the first {@link StaleTokenException}, {@link
   * LeaseLostSQLException} or {@link LeaseLostException}, else the first SQL exception with
   * SQLState {@code ZF001} or {@code ZF004}; null if there is none.
   *
   * @param failure the failure
   * @return the refusal, or null
   */
  static Throwable findRefusal(Throwable failure) {
    Throwable bySqlState = null;
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof LeaseLostException) {
        return t;
      }
      if (t instanceof SQLException sql) {
        for (SQLException s = sql;
            s != null && (s == sql || seen.put(s, Boolean.TRUE) == null);
            s = s.getNextException()) {
          if (s instanceof StaleTokenException || s instanceof LeaseLostSQLException) {
            return s;
          }
          if (bySqlState == null && isRefusal(s)) {
            bySqlState = s;
          }
          if (s != sql && s.getCause() instanceof LeaseLostException lost) {
            return lost;
          }
        }
      }
    }
    return bySqlState;
  }

  private static boolean isRefusal(SQLException e) {
    return FenceSchema.SQLSTATE_STALE_TOKEN.equals(e.getSQLState())
        || FenceSchema.SQLSTATE_LEASE_LOST.equals(e.getSQLState());
  }
}
