package dev.fencing.jdbc;

import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;

/**
 * A plain SQL statement refused inside a fencing scope, before the driver saw it: it writes, or may
 * write, a fenced table in a shape whose guarded form the library cannot prove (or plain SQL is not
 * rewritten at all, {@link FenceOptions.PlainSql#REFUSE}). Nothing was sent to the database; the
 * lease is not lost, and retrying the same statement is refused again. The message quotes the
 * statement as the application wrote it, says why, and names the two ways out: write the statement
 * with {@link GuardedStatements} or {@link dev.fencing.jdbc.jooq.FencedDsl}, or install the
 * enforcement trigger and use trigger mode ({@link FenceOptions#withTriggerMode(boolean)}).
 *
 * <p>SQLState {@value #SQL_STATE} (feature not supported), the same for every refusal.
 */
public class PlainSqlRefusedException extends SQLFeatureNotSupportedException {
  private static final long serialVersionUID = 1L;

  /** The SQLState of every refused plain statement. */
  public static final String SQL_STATE = "0A000";

  /** The refused statement, exactly as the application passed it to JDBC. */
  private final String statement;

  /** Why it was refused, without the statement and the ways out. */
  private final String reason;

  /**
   * Creates the exception.
   *
   * @param message the whole message: statement, reason and ways out
   * @param statement the statement as the application wrote it
   * @param reason why it was refused, one clause ("it is a MERGE ...")
   * @throws NullPointerException if an argument is null
   */
  public PlainSqlRefusedException(String message, String statement, String reason) {
    super(Objects.requireNonNull(message, "message"), SQL_STATE);
    this.statement = Objects.requireNonNull(statement, "statement");
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** {@return the refused statement, exactly as the application passed it to JDBC} */
  public String statement() {
    return statement;
  }

  /** {@return why it was refused, without the statement and the ways out} */
  public String reason() {
    return reason;
  }
}
