package dev.fencing.core;

/**
 * Root of every unchecked exception thrown by fencing. Catch this type to handle all of them.
 *
 * <p>Database errors are not wrapped: fencing-jdbc reports them, including a rejected stale write,
 * as {@code java.sql.SQLException}s.
 */
public class FencingException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception with a message.
   *
   * @param message what went wrong
   */
  public FencingException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a message and a cause.
   *
   * @param message what went wrong
   * @param cause the underlying failure
   */
  public FencingException(String message, Throwable cause) {
    super(message, cause);
  }
}
