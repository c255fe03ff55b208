package dev.fencing.migrations;

import java.time.Duration;

/**
 * A DDL statement on a user table could not get its lock within the configured bound: every attempt
 * hit {@code lock_timeout} (SQLSTATE {@code 55P03}), typically because a long transaction holds a
 * lock on the table. Nothing was changed on that table; re-run once the transaction is gone.
 */
public final class LockNotAcquiredException extends FencingMigrationException {
  private static final long serialVersionUID = 1L;

  /** The table whose lock was not acquired. */
  private final String table;

  /** How many attempts were made. */
  private final int attempts;

  /** How long the attempts took in total. */
  private final Duration elapsed;

  /**
   * Creates the exception.
   *
   * @param table the schema-qualified table whose lock could not be taken
   * @param statement what was being done (for the message)
   * @param attempts how many attempts were made
   * @param elapsed how long was spent trying
   * @param cause the last lock-timeout error
   */
  public LockNotAcquiredException(
      String table, String statement, int attempts, Duration elapsed, Throwable cause) {
    super(
        "could not lock table "
            + table
            + " to "
            + statement
            + ": lock_timeout hit on all "
            + attempts
            + " attempts in "
            + elapsed.toMillis()
            + " ms (a long-running transaction holds a lock on it?)",
        cause);
    this.table = table;
    this.attempts = attempts;
    this.elapsed = elapsed;
  }

  /**
   * The table whose lock could not be taken.
   *
   * @return schema-qualified table name
   */
  public String table() {
    return table;
  }

  /**
   * How many attempts were made.
   *
   * @return the attempt count
   */
  public int attempts() {
    return attempts;
  }

  /**
   * How long was spent trying.
   *
   * @return wall-clock time from the first attempt to giving up
   */
  public Duration elapsed() {
    return elapsed;
  }
}
