package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches, on a daemon thread and a second connection, a registration that waits on its fence row,
 * and sweeps its stale blockers every {@link #POLL_MILLIS} ms while the lease is held; the
 * subclasses say how a database finds and ends them.
 *
 * <p>If the watch fails (no second connection, a missing privilege, any other error), it cancels
 * the waiting statement, so the registration fails at once, and {@link #stop()} returns why.
 */
abstract class BlockerWatch implements AutoCloseable {

  static final String INSUFFICIENT_PRIVILEGE = "42501";
  private static final long POLL_MILLIS = 50;

  /**
   * One database's sweep, over statements it prepared on the watching connection (they close with
   * that connection).
   */
  @FunctionalInterface
  interface Sweep {

    /** Finds the stale blockers of the registration, as they are now, and ends them. */
    void run() throws SQLException;
  }

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final DataSource dataSource;
  final Lease lease;
  private final Statement waiting;
  private final Duration waitedFor;
  private final Object wake = new Object();
  private final Thread thread;
  private boolean stopped;
  private volatile SQLException failure;

  BlockerWatch(DataSource dataSource, Lease lease, Statement waiting, Duration waitedFor) {
    this.dataSource = dataSource;
    this.lease = lease;
    this.waiting = waiting;
    this.waitedFor = waitedFor;
    this.thread = new Thread(this::run, "fencing-registration-watch");
    thread.setDaemon(true);
  }

  /**
   * Runs the registration's {@code waiting} call under {@code watch} (none if null) and stops the
   * watch after it. If the watch failed, its failure is thrown (it cancelled the call), with the
   * call's own failure suppressed.
   */
  static <T> T around(BlockerWatch watch, SqlCall<T> waiting) throws SQLException {
    if (watch == null) {
      return waiting.call();
    }
    try {
      return waiting.call();
    } catch (SQLException e) {
      SQLException watchFailure = watch.stop();
      if (watchFailure != null) {
        watchFailure.addSuppressed(e);
        throw watchFailure;
      }
      throw e;
    } finally {
      watch.stop();
    }
  }

  /** Prepares, on the watching connection, what {@link Sweep#run()} needs. */
  abstract Sweep prepare(Connection watching) throws SQLException;

  /** Starts the watching thread; the subclasses' {@code start} call it once constructed. */
  final void begin() {
    thread.start();
  }

  /**
   * Stops watching and returns why the watch failed, if it did (then it also cancelled the waiting
   * statement).
   */
  public SQLException stop() {
    synchronized (wake) {
      stopped = true;
      wake.notifyAll();
    }
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return failure;
  }

  @Override
  public void close() {
    stop();
  }

  private void run() {
    Connection watching;
    try {
      watching = dataSource.getConnection();
    } catch (SQLException e) {
      failure =
          new SQLException(
              registering()
                  + " the fence row is still locked, and no second connection was available to"
                  + " find and end the stale holder: "
                  + e.getMessage(),
              e.getSQLState(),
              e);
      cancelWaiting(failure);
      return;
    }
    try (Connection connection = watching) {
      connection.setAutoCommit(true);
      Sweep sweep = prepare(connection);
      while (!stopped() && lease.isHeld()) {
        sweep.run();
        pause();
      }
    } catch (SQLException e) {
      failure = e;
      cancelWaiting(e);
    } catch (RuntimeException e) {
      failure = new SQLException("watching the registration's blockers failed: " + e, e);
      cancelWaiting(failure);
    }
  }

  /** Logs that the blocker {@code description} was ended. */
  final void ended(String description) {
    log.warn(
        "registering token {} for \"{}\": ended {}, which still locked the fence row for an"
            + " older registration after {}",
        lease.token(),
        lease.resource(),
        description,
        waitedFor);
  }

  /**
   * The failure (SQLState {@code 42501}) for a privilege the watch lacks: {@code lacking} follows
   * "the fence row is still locked" and says what may not be done and how to allow it.
   */
  final SQLException insufficientPrivilege(String lacking, SQLException cause) {
    return new SQLException(
        registering()
            + " the fence row is still locked"
            + lacking
            + ", or switch FenceOptions.endStaleBlockers off to wait up to the registration"
            + " timeout instead ("
            + cause.getMessage()
            + ")",
        INSUFFICIENT_PRIVILEGE,
        cause);
  }

  private String registering() {
    return "registering token "
        + lease.token()
        + " for \""
        + lease.resource()
        + "\": after "
        + waitedFor;
  }

  private boolean stopped() {
    synchronized (wake) {
      return stopped;
    }
  }

  private void pause() {
    synchronized (wake) {
      if (!stopped) {
        try {
          wake.wait(POLL_MILLIS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          stopped = true;
        }
      }
    }
  }

  private void cancelWaiting(SQLException why) {
    if (stopped()) {
      return;
    }
    try {
      waiting.cancel();
    } catch (SQLException e) {
      why.addSuppressed(e);
    }
  }
}
