package dev.fencing.jdbc;

import dev.fencing.core.FencingException;

/**
 * A freshly acquired lease could not be registered in the resource fence: the database failed, the
 * fence row stayed locked past the registration timeout, the token stayed stale after recovery, or
 * the registration's commit could not be shown durable (PostgreSQL reported it with a warning, or
 * it still waited for a synchronous standby at the registration timeout). The lease has been
 * released; a registration that committed on the primary anyway only makes the next acquisition
 * register above it.
 */
public class FenceRegistrationException extends FencingException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed
   * @param cause the underlying failure, usually a {@link java.sql.SQLException}
   */
  public FenceRegistrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
