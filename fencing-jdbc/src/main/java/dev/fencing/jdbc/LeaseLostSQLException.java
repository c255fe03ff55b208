package dev.fencing.jdbc;

import dev.fencing.core.LeaseLostException;
import dev.fencing.schema.FenceSchema;
import java.sql.SQLNonTransientException;
import java.util.Objects;

/**
 * A JDBC call on a fenced connection refused inside the JVM because the scope's lease is already
 * known to be lost: nothing was sent to the database. It is the checked, JDBC-shaped form of {@link
 * LeaseLostException} (its cause), so that code which only sees {@link java.sql.SQLException}s, and
 * exception translators keyed on SQLState, treat "the JVM knew" exactly like "the database refused"
 * ({@link StaleTokenException}): the holder must stop writing, and retrying cannot succeed.
 *
 * <p>SQLState {@value #SQL_STATE}.
 */
public class LeaseLostSQLException extends SQLNonTransientException {
  private static final long serialVersionUID = 1L;

  /** The SQLState of a JDBC call refused because the lease is known to be lost. */
  public static final String SQL_STATE = FenceSchema.SQLSTATE_LEASE_LOST;

  /** The resource of the lost lease. */
  private final String resource;

  /** The fencing token of the lost lease. */
  private final long token;

  /**
   * Creates the exception from the lease's own loss report.
   *
   * @param cause the {@link LeaseLostException} that says which lease and why
   * @throws NullPointerException if {@code cause} is null
   */
  public LeaseLostSQLException(LeaseLostException cause) {
    super(Objects.requireNonNull(cause, "cause").getMessage(), SQL_STATE, cause);
    this.resource = cause.resource();
    this.token = cause.token().value();
  }

  /** {@return the resource of the lost lease} */
  public String resource() {
    return resource;
  }

  /**
   * {@return the fencing token of the lost lease (the token the refused call would have carried)}
   */
  public long attemptedToken() {
    return token;
  }

  /** {@return the lease's loss report} */
  @Override
  public synchronized LeaseLostException getCause() {
    return (LeaseLostException) super.getCause();
  }
}
