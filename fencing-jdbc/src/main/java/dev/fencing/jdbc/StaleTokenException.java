package dev.fencing.jdbc;

import dev.fencing.core.FencingToken;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLNonTransientException;

/**
 * A write was rejected by the database because its fencing token is not the one the fence names:
 * another holder registered for the resource after this one ({@link Reason#SUPERSEDED}), or the
 * writer's lease was never registered ({@link Reason#NOT_REGISTERED}). Retrying cannot succeed; the
 * holder must stop writing.
 *
 * <p>Every instance carries the figures the database saw: the resource, the writer's token and the
 * token the fence (or, for a row written by a newer holder, the row) held. A lease the JVM already
 * knows to be lost is refused before anything reaches the database instead: by {@link Fencing#run}
 * with {@link dev.fencing.core.LeaseLostException}, and inside a JDBC call with {@link
 * LeaseLostSQLException} (SQLState {@value LeaseLostSQLException#SQL_STATE}). When a newer holder
 * registered, the lease is marked lost as this exception is raised.
 *
 * <p>SQLState {@value #SQL_STATE}, the same code the enforcement trigger raises. The transaction is
 * left as the failure left it: roll it back.
 */
public class StaleTokenException extends SQLNonTransientException {
  private static final long serialVersionUID = 1L;

  /** The SQLState of a rejected stale write. */
  public static final String SQL_STATE = FenceSchema.SQLSTATE_STALE_TOKEN;

  /** Why the write was refused. */
  public enum Reason {
    /** A newer holder registered, or the fence names another lease with the same token. */
    SUPERSEDED,
    /** The writer's lease was never registered in the fence: the fence holds a lower token. */
    NOT_REGISTERED
  }

  /** Why the write was refused. */
  private final Reason reason;

  /** The resource whose fence rejected the write. */
  private final String resource;

  /** The token the rejected write carried. */
  private final long attemptedToken;

  /** The token registered when the write was rejected, 0 if none. */
  private final long currentToken;

  /**
   * Creates the exception for a superseded token.
   *
   * @param message what was rejected and why
   * @param resource the resource the write was fenced by
   * @param attemptedToken the writer's token
   * @param currentToken the token the fence holds now, or 0 if none is registered
   * @param cause the database error, or null
   */
  public StaleTokenException(
      String message, String resource, long attemptedToken, long currentToken, Throwable cause) {
    this(message, Reason.SUPERSEDED, resource, attemptedToken, currentToken, cause);
  }

  /**
   * Creates the exception.
   *
   * @param message what was rejected and why
   * @param reason why
   * @param resource the resource the write was fenced by
   * @param attemptedToken the writer's token
   * @param currentToken the token the fence holds now, or 0 if none is registered
   * @param cause the database error, or null
   * @throws NullPointerException if {@code reason} is null
   */
  public StaleTokenException(
      String message,
      Reason reason,
      String resource,
      long attemptedToken,
      long currentToken,
      Throwable cause) {
    super(message, SQL_STATE, cause);
    this.reason = java.util.Objects.requireNonNull(reason, "reason");
    this.resource = resource;
    this.attemptedToken = attemptedToken;
    this.currentToken = currentToken;
  }

  /**
   * Creates the exception for a write or registration that the fence rejected, with the one message
   * every path uses: a fence below the writer's token (or none) means the writer was never
   * registered, anything else that it was superseded.
   *
   * @param resource the resource
   * @param attempted the writer's token
   * @param current the token the fence holds, 0 if none
   * @return the exception
   */
  public static StaleTokenException rejected(
      String resource, FencingToken attempted, long current) {
    return rejected(resource, attempted.value(), current, null);
  }

  /**
   * Same as {@link #rejected(String, FencingToken, long)}, with the database error as the cause.
   *
   * @param resource the resource
   * @param attempted the writer's token
   * @param current the token the fence (or the row) holds, 0 if none
   * @param cause the database error, or null
   * @return the exception
   */
  public static StaleTokenException rejected(
      String resource, long attempted, long current, Throwable cause) {
    if (current < attempted) {
      return new StaleTokenException(
          "fencing token "
              + attempted
              + " for resource \""
              + resource
              + "\" was never registered in the fence ("
              + (current == 0
                  ? "no holder is registered"
                  : "the fence holds token " + current + ", registered by another lease")
              + "): take leases through FencedLeaseManager, which registers them",
          Reason.NOT_REGISTERED,
          resource,
          attempted,
          current,
          cause);
    }
    return new StaleTokenException(
        "stale fencing token for resource \""
            + resource
            + "\": attempted "
            + attempted
            + ", current "
            + current
            + (current == attempted
                ? " (registered by another lease)"
                : " (a newer holder registered)"),
        Reason.SUPERSEDED,
        resource,
        attempted,
        current,
        cause);
  }

  /** {@return why the write was refused} */
  public Reason reason() {
    return reason;
  }

  /** {@return the resource whose fence rejected the write} */
  public String resource() {
    return resource;
  }

  /** {@return the token the rejected write carried} */
  public long attemptedToken() {
    return attemptedToken;
  }

  /**
   * {@return the token registered for the resource (or stored in the row a newer holder wrote) when
   * the write was rejected, 0 if no holder is registered}
   */
  public long currentToken() {
    return currentToken;
  }
}
