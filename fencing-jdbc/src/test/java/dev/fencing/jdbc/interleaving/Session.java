package dev.fencing.jdbc.interleaving;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.interleaving.StatementKind.Rows;
import dev.fencing.jdbc.interleaving.StatementKind.Step;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.jooq.exception.DataAccessException;

/**
 * One writer's session: a DAO of one {@link StatementKind} driving its transactions in one {@link
 * TransactionShape}, fenced by a lease (or, for the control run, with fencing switched off). Every
 * write and boundary is recorded as an {@link Outcome}; the session never throws for a rejected
 * statement, it records it and behaves as the shape's DAO would.
 *
 * <p>Not thread-safe; all its steps run on one thread, one after another.
 */
final class Session {

  /** What one step of the script did. */
  record Outcome(String what, int[] counts, Exception error, boolean afterRegistration) {
    boolean isWrite() {
      return what.contains(" write of row ");
    }

    boolean droppedARow() {
      if (counts == null) {
        return false;
      }
      for (int count : counts) {
        if (count == 0) {
          return true;
        }
      }
      return false;
    }

    @Override
    public String toString() {
      return what
          + (error != null
              ? " failed: " + describe(error)
              : counts != null ? " -> " + Arrays.toString(counts) + " rows" : " ok");
    }
  }

  private final InterleavingDb db;
  private final StatementKind kind;
  private final TransactionShape shape;
  private final int isolation;
  private final Lease lease;
  private final boolean current;
  private final Rows rows;
  private final BooleanSupplier registrationCommitted;
  private final FencedDsl dsl;
  private final List<Outcome> outcomes = new ArrayList<>();
  private Connection connection;
  private int backendPid;
  private boolean stopped;

  /**
   * @param lease the writer's lease, or null to write with fencing switched off
   * @param current whether the writer is the successor (writes its own prime rows)
   */
  Session(
      InterleavingDb db,
      StatementKind kind,
      TransactionShape shape,
      int isolation,
      Lease lease,
      boolean current,
      Rows rows,
      BooleanSupplier registrationCommitted) {
    this.db = db;
    this.kind = kind;
    this.shape = shape;
    this.isolation = isolation;
    this.lease = lease;
    this.current = current;
    this.rows = rows;
    this.registrationCommitted = registrationCommitted;
    this.dsl = new FencedDsl(db.options);
  }

  boolean fenced() {
    return lease != null;
  }

  String table() {
    return db.table(fenced() ? kind.fencedTable : "items");
  }

  Backend backend() {
    return db.backend;
  }

  FencedDsl dsl() {
    return dsl;
  }

  String marker(Step step) {
    return (current ? "current-" : "stale-") + step.name().toLowerCase(Locale.ROOT);
  }

  Connection connection() {
    return connection;
  }

  Connection driver() throws SQLException {
    return db.backend.driver(connection);
  }

  int backendPid() {
    return backendPid;
  }

  List<Outcome> outcomes() {
    return outcomes;
  }

  // ------------------------------------------------------------ script

  void open() throws SQLException {
    borrow();
  }

  void borrowIfClosed() {
    if (connection == null && !stopped) {
      try {
        borrow();
      } catch (SQLException e) {
        record("borrow again", null, e);
        stopped = true;
      }
    }
  }

  private void borrow() throws SQLException {
    DataSource source = !fenced() ? db.pool : kind.triggerMode ? db.triggerDb : db.guardDb;
    connection = inScope(source::getConnection);
    connection.setTransactionIsolation(isolation);
    connection.setAutoCommit(shape.autoCommitAtOpen);
    backendPid = db.backend.pid(connection);
  }

  void prime() {
    inScopeQuietly(() -> shape.prime(this));
  }

  void beforeWrites() {
    inScopeQuietly(() -> shape.beforeWrites(this));
  }

  void end() {
    inScopeQuietly(() -> shape.end(this));
  }

  /** One write of the kind; a rejection is recorded, then the DAO gives up or goes on. */
  void write(Step step, int k) {
    if (stopped) {
      return;
    }
    long id =
        step != Step.PRIME
            ? rows.contested(step)
            : current ? rows.currentPrime(k) : rows.stalePrime(k);
    String what = step.name().toLowerCase(Locale.ROOT) + " write of row " + id;
    try {
      Connection c = step != Step.PRIME && shape.writesThroughDriver() ? driver() : connection;
      int[] counts =
          inScope(() -> fenced() ? kind.fenced(this, c, step, id) : kind.plain(this, c, step, id));
      record(what, counts, null);
    } catch (SQLException | DataAccessException e) {
      record(what, null, e);
      if (!shape.continuesAfterRejection()) {
        abortQuietly();
        stopped = true;
      }
    }
  }

  /** A step on the connection that is not a write (commit, savepoint, close...). */
  void boundary(String what, SqlAction action) {
    if (stopped) {
      return;
    }
    try {
      action.run(connection);
      record(what, null, null);
    } catch (SQLException | RuntimeException e) {
      record(what, null, e);
      abortQuietly();
      stopped = true;
    }
  }

  void close() throws SQLException {
    if (connection != null) {
      Connection closing = connection;
      connection = null;
      closing.close();
    }
  }

  private void abortQuietly() {
    if (connection == null) {
      return;
    }
    try {
      shape.abort(this);
    } catch (SQLException | RuntimeException ignored) {
      // the DAO's rollback failed too; closing the connection ends the transaction
    }
  }

  private void record(String what, int[] counts, Exception error) {
    outcomes.add(new Outcome(what, counts, error, registrationCommitted.getAsBoolean()));
  }

  private <T> T inScope(Fencing.Call<T, SQLException> work) throws SQLException {
    return fenced() ? Fencing.call(lease, work) : work.call();
  }

  private void inScopeQuietly(Runnable work) {
    if (fenced()) {
      Fencing.run(lease, work::run);
    } else {
      work.run();
    }
  }

  /** A JDBC action that is not a write. */
  @FunctionalInterface
  interface SqlAction {
    void run(Connection c) throws SQLException;
  }

  static String describe(Throwable error) {
    Throwable cause = error;
    if (error instanceof DataAccessException && error.getCause() != null) {
      cause = error.getCause();
    }
    String state = cause instanceof SQLException sql ? " [" + sql.getSQLState() + "]" : "";
    String message = String.valueOf(cause.getMessage());
    int newline = message.indexOf('\n');
    return cause.getClass().getSimpleName()
        + state
        + ": "
        + (newline < 0 ? message : message.substring(0, newline));
  }
}
