package dev.fencing.examples;

import java.sql.SQLException;

/**
 * The idempotency key of a charge ({@code charges.idempotency_key}, unique): what makes a retry of
 * the job's own charge harmless when the first attempt's COMMIT reply was lost. Fencing refuses a
 * stale holder; it cannot tell a retry by the current holder from a new write. The key names the
 * charge: the same run, customer and period give the same key, so a retry collides with a first
 * attempt that did commit, and the database refuses the second charge.
 */
final class IdempotencyKeys {

  /** The name of the unique index on {@code charges.idempotency_key} (both databases). */
  static final String INDEX = "charges_idempotency_key";

  private IdempotencyKeys() {}

  /** The key of the charge of {@code customer} for {@code period} made by run {@code runId}. */
  static String of(String runId, Customer customer, String period) {
    return runId + ":" + customer.id() + ":" + period;
  }

  /**
   * Whether {@code e} is the database refusing a second charge with the same key: a unique
   * violation (SQLState 23505 on PostgreSQL, 23000 with error 1062 on MariaDB) naming {@link
   * #INDEX}.
   */
  static boolean isDuplicateCharge(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql
          && ("23505".equals(sql.getSQLState()) || sql.getErrorCode() == 1062)
          && String.valueOf(sql.getMessage()).contains(INDEX)) {
        return true;
      }
    }
    return false;
  }
}
