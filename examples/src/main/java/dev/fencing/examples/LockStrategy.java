package dev.fencing.examples;

import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * How a billing run protects itself from a concurrent run. The replay's modes differ only in the
 * strategy; {@link BillingJob} calls it at four points:
 *
 * <ol>
 *   <li>{@link #tryAcquire} once before the run: empty means "someone else has it", the run is
 *       skipped;
 *   <li>{@link Hold#stillAllowed} before each customer: false stops the run;
 *   <li>{@link Hold#dataSource} and {@link Hold#write} around each customer's write transaction:
 *       where a fencing strategy wraps connections and scopes the write to its lease;
 *   <li>{@link Hold#release} once after the run.
 * </ol>
 *
 * <p>Mode 3 (token + heartbeat) needs only {@code tryAcquire}, {@code stillAllowed} and {@code
 * release} from a lease; mode 4 (fenced) additionally overrides {@code dataSource}, {@code write}
 * and {@code isStaleWriteRejection}.
 */
public interface LockStrategy {

  /** Short name for tables and logs. */
  String name();

  /** Tries once to take the lock for the run {@code runId}, without waiting. */
  Optional<Hold> tryAcquire(String runId) throws Exception;

  /** A lock this run believes it holds. */
  interface Hold {

    /** The fencing token of this hold, or 0 when the strategy has none. */
    default long token() {
      return 0;
    }

    /** Checked before every customer: may the run go on? A naive lock never asks. */
    default boolean stillAllowed() {
      return true;
    }

    /**
     * The {@link DataSource} the run's writes go through. A fencing strategy returns a wrapper
     * (e.g. {@code FencedDataSource}) around {@code pool}.
     */
    default DataSource dataSource(DataSource pool) {
      return pool;
    }

    /**
     * Runs one customer's write transaction in this hold's scope, e.g. {@code Fencing.run(lease,
     * ...)}.
     */
    default <T> T write(SqlWork<T> work) throws SQLException {
      return work.run();
    }

    /** True if {@code e} is the database rejecting this holder as stale. */
    default boolean isStaleWriteRejection(SQLException e) {
      return false;
    }

    /** Releases the lock after the run; says what that did to the lock key. */
    Release release();
  }

  /** What a release did. */
  enum Release {
    /** Removed this run's own lock. */
    OWN_LOCK_RELEASED,
    /** Nothing to remove (expired, or there is no lock). */
    NOTHING_RELEASED,
    /** Removed a lock that another run had acquired after this run's lock expired. */
    DELETED_ANOTHER_RUNS_LOCK
  }

  /** A unit of JDBC work. */
  @FunctionalInterface
  interface SqlWork<T> {
    T run() throws SQLException;
  }
}
