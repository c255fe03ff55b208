package dev.fencing.jdbc;

import dev.fencing.core.FencingException;

/**
 * A freshly acquired lease could not be registered in the resource fence: the database failed, the
 * fence row stayed locked past the registration timeout, or the token stayed stale after recovery.
 * The lease has been released.
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
