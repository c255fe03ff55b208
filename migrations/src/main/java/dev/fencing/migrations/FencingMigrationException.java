package dev.fencing.migrations;

/**
 * A fencing migration could not be completed: the database refused a statement, a table does not
 * exist or has an incompatible {@code fence_token} column, or Flyway failed. The message names the
 * table or step concerned; the cause carries the underlying error.
 */
public class FencingMigrationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed, naming the table or step
   * @param cause the underlying error, or {@code null}
   */
  public FencingMigrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
