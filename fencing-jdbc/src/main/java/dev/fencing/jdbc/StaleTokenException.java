package dev.fencing.jdbc;

import dev.fencing.core.FencingToken;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLNonTransientException;

/**
 * A write was rejected because its fencing token is stale: another holder registered for the
 * resource after this one, or the lease is already known to be lost. Retrying cannot succeed; the
 * holder must stop writing.
 *
 * <p>SQLState {@value #SQL_STATE}, the same code the enforcement trigger raises. The transaction is
 * left as the failure left it: roll it back.
 */
public class StaleTokenException extends SQLNonTransientException {
  private static final long serialVersionUID = 1L;

  /** The SQLState of a rejected stale write. */
  public static final String SQL_STATE = FenceSchema.SQLSTATE_STALE_TOKEN;

  private final String resource;
  private final long attemptedToken;
  private final long currentToken;

  /**
   * Creates the exception.
   *
   * @param message what was rejected and why
   * @param resource the resource the write was fenced by
   * @param attemptedToken the writer's token
   * @param currentToken the token the fence holds now, or 0 if none is registered or it is unknown
   * @param cause the database error, or null
   */
  public StaleTokenException(
      String message, String resource, long attemptedToken, long currentToken, Throwable cause) {
    super(message, SQL_STATE, cause);
    this.resource = resource;
    this.attemptedToken = attemptedToken;
    this.currentToken = currentToken;
  }

  /**
   * Creates the exception for a write or registration that the fence rejected.
   *
   * @param resource the resource
   * @param attempted the writer's token
   * @param current the token the fence holds, 0 if none
   * @return the exception
   */
  public static StaleTokenException rejected(
      String resource, FencingToken attempted, long current) {
    return new StaleTokenException(
        "stale fencing token for resource \""
            + resource
            + "\": attempted "
            + attempted
            + ", current "
            + current
            + (current == attempted.value() ? " (registered by another lease)" : ""),
        resource,
        attempted.value(),
        current,
        null);
  }

  /** Why the write was refused. */
  public enum Reason {
    /** A newer holder registered, or the fence names another lease with the same token. */
    SUPERSEDED,
    /** The writer's lease was never registered in the fence. */
    NOT_REGISTERED
  }

  /** Returns why the write was refused. */
  public Reason reason() {
    return Reason.SUPERSEDED;
  }

  /** Returns the resource whose fence rejected the write. */
  public String resource() {
    return resource;
  }

  /** Returns the token the rejected write carried. */
  public long attemptedToken() {
    return attemptedToken;
  }

  /**
   * Returns the token registered for the resource when the write was rejected, 0 if none/unknown.
   */
  public long currentToken() {
    return currentToken;
  }
}
