package dev.fencing.core;

/**
 * Thrown when the lease store (Redis) could not be reached or answered with an error within the
 * configured {@linkplain LeaseOptions#operationTimeout() operation timeout}.
 */
public class LeaseBackendException extends FencingException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was attempted and what failed
   * @param cause the underlying failure
   */
  public LeaseBackendException(String message, Throwable cause) {
    super(message, cause);
  }
}
