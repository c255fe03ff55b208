package dev.fencing.jdbc.interleaving;

import dev.fencing.jdbc.interleaving.StatementKind.Step;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;

/**
 * How a DAO drives its transactions. A session's script is: {@link #open}, {@link #prime} (writes
 * made while the writer is still the registered holder, ending at a boundary that releases the
 * fence row's lock in the database), {@link #beforeWrites}, two writes, {@link #end}, and closing
 * the connection without restoring auto-commit (the DAO relies on the pool). Adding a shape is one
 * constant.
 */
enum TransactionShape {
  AUTO_COMMIT("auto-commit", true) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
    }

    @Override
    void end(Session s) {}

    @Override
    void abort(Session s) {}
  },
  COMMIT("commit()", false) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
      s.boundary("commit()", Connection::commit);
    }
  },
  SQL_COMMIT("SQL-text COMMIT", false) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
      s.boundary("execute(\"COMMIT\")", c -> sql(c, "COMMIT"));
    }

    @Override
    void end(Session s) {
      s.boundary("execute(\"COMMIT\")", c -> sql(c, "COMMIT"));
    }

    @Override
    void abort(Session s) throws SQLException {
      sql(s.connection(), "ROLLBACK");
    }
  },
  SQL_ROLLBACK("SQL-text ROLLBACK", false) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
      s.boundary("execute(\"ROLLBACK\")", c -> sql(c, "ROLLBACK"));
    }

    @Override
    void end(Session s) {
      s.boundary("execute(\"COMMIT\")", c -> sql(c, "COMMIT"));
    }

    @Override
    void abort(Session s) throws SQLException {
      sql(s.connection(), "ROLLBACK");
    }
  },
  SAVEPOINT_API("savepoint rolled back (rollback(Savepoint)), then continued", false) {
    @Override
    void prime(Session s) {
      Savepoint[] savepoint = new Savepoint[1];
      s.boundary("setSavepoint()", c -> savepoint[0] = c.setSavepoint());
      s.write(Step.PRIME, 0);
      s.boundary("rollback(savepoint)", c -> c.rollback(savepoint[0]));
    }
  },
  SAVEPOINT_SQL("savepoint rolled back (SQL-text ROLLBACK TO SAVEPOINT), then continued", false) {
    @Override
    void prime(Session s) {
      s.boundary("execute(\"SAVEPOINT s\")", c -> sql(c, "SAVEPOINT s"));
      s.write(Step.PRIME, 0);
      s.boundary("execute(\"ROLLBACK TO SAVEPOINT s\")", c -> sql(c, "ROLLBACK TO SAVEPOINT s"));
    }
  },
  /** The DAO catches a failed write and goes on with the next item, then commits. */
  CONTINUE_AFTER_REJECTION("continues after a rejected statement", false) {
    @Override
    void prime(Session s) {
      s.boundary("read (starts the transaction)", c -> sql(c, "SELECT count(*) FROM " + s.table()));
    }

    @Override
    boolean continuesAfterRejection() {
      return true;
    }
  },
  /**
   * First write in auto-commit, then {@code setAutoCommit(false)}, a write, {@code commit()}, and
   * {@code close()} without restoring auto-commit; then the pool lends the same connection again.
   */
  POOL_RETURN("returned to the pool with auto-commit off, borrowed again", true) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
      s.boundary("setAutoCommit(false)", c -> c.setAutoCommit(false));
      s.write(Step.PRIME, 1);
      s.boundary("commit()", Connection::commit);
      s.boundary("close() with auto-commit off", c -> s.close());
    }

    @Override
    void beforeWrites(Session s) {
      s.borrowIfClosed();
      s.boundary("setAutoCommit(false)", c -> c.setAutoCommit(false));
    }
  },
  UNWRAPPED_COMMIT("commit on the unwrapped driver connection", false) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
      s.boundary("unwrap(PGConnection).commit()", c -> s.driver().commit());
    }

    @Override
    void end(Session s) {
      s.boundary("unwrap(PGConnection).commit()", c -> s.driver().commit());
    }

    @Override
    void abort(Session s) throws SQLException {
      s.driver().rollback();
    }
  },
  /**
   * Trigger mode in auto-commit: the first write goes through the fenced connection, later ones
   * straight to the unwrapped driver connection. The registration's settings are transaction-local
   * and the wrapper never sees those writes, so they carry no lease: the strict trigger must refuse
   * them (ZF003) for the stale and the current holder alike, and nothing may commit unfenced.
   */
  UNWRAPPED_WRITES("writes through unwrap to the driver connection", true) {
    @Override
    void prime(Session s) {
      s.write(Step.PRIME, 0);
    }

    @Override
    boolean writesThroughDriver() {
      return true;
    }

    /**
     * Plain SQL on a table with the strict trigger only: guarded statements cannot be prepared on
     * the driver connection, and on a lenient table a write that never carried a token is let
     * through by design (the threat model leaves {@code unwrap} out).
     */
    @Override
    boolean appliesTo(StatementKind kind) {
      return kind == StatementKind.TRIGGER_MODE_SQL;
    }

    @Override
    void end(Session s) {}

    @Override
    void abort(Session s) {}
  };

  final String label;

  /** The connection's auto-commit mode when borrowed. */
  final boolean autoCommitAtOpen;

  TransactionShape(String label, boolean autoCommitAtOpen) {
    this.label = label;
    this.autoCommitAtOpen = autoCommitAtOpen;
  }

  /** Writes made while the writer is still the registered holder, ending at a boundary. */
  abstract void prime(Session s);

  /** What the DAO does before its writes (after the registration in the committed phase). */
  void beforeWrites(Session s) {}

  /** How the DAO ends the transaction after its writes. */
  void end(Session s) {
    s.boundary("commit()", Connection::commit);
  }

  /** How the DAO gives up after a rejected write (when it does not go on). */
  void abort(Session s) throws SQLException {
    s.connection().rollback();
  }

  /** Whether the DAO catches a rejected write and goes on in the same transaction. */
  boolean continuesAfterRejection() {
    return false;
  }

  /** Whether writes after the prime go to the unwrapped driver connection. */
  boolean writesThroughDriver() {
    return false;
  }

  /** Whether the shape means something for {@code kind}. */
  boolean appliesTo(StatementKind kind) {
    return true;
  }

  static void sql(Connection c, String sql) throws SQLException {
    try (Statement statement = c.createStatement()) {
      statement.execute(sql);
    }
  }

  @Override
  public String toString() {
    return label;
  }
}
