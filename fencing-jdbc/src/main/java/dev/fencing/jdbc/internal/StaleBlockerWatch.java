package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends the sessions that keep a registration waiting on its fence row for an <em>older</em>
 * registration: a holder frozen in a long statement, or whose client stopped reading a result
 * (active in {@code ClientWrite}, where neither {@code statement_timeout} nor {@code
 * pg_cancel_backend} is acted on, and {@code idle_in_transaction_session_timeout} never fires).
 *
 * <p>While the registering backend waits, a second connection asks {@code pg_blocking_pids} who
 * blocks it and ends ({@code pg_terminate_backend}) a blocker only if, at that moment, all of this
 * holds:
 *
 * <ul>
 *   <li>the registering backend waits for a row lock (not for a lock on the table);
 *   <li>the fence row names a token lower than the registering lease's, so every lock on it is held
 *       for an older registration;
 *   <li>the blocker holds the fence table in {@code ROW SHARE} mode (it locked fence rows with
 *       {@code SELECT ... FOR SHARE}, as guarded writes and the trigger do) and in no stronger
 *       mode: registrations, migrations and anyone else writing or locking the fence table are
 *       never ended.
 * </ul>
 *
 * <p>Ending a backend needs superuser, membership in the blocker's role, or {@code
 * pg_signal_backend} (and only a superuser may end a superuser's backend). Without it the watch
 * fails with SQLState {@code 42501} and cancels the waiting statement, so the registration fails at
 * once with a message that names the blocker.
 */
public final class StaleBlockerWatch implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StaleBlockerWatch.class);
  private static final String INSUFFICIENT_PRIVILEGE = "42501";
  private static final long POLL_MILLIS = 50;

  private final DataSource dataSource;
  private final Lease lease;
  private final int waiterPid;
  private final Statement waiting;
  private final Duration waitedFor;
  private final String candidates;
  private final String endOne;
  private final Object wake = new Object();
  private final Thread thread;
  private boolean stopped;
  private volatile SQLException failure;

  private StaleBlockerWatch(
      DataSource dataSource,
      String schema,
      Lease lease,
      int waiterPid,
      Statement waiting,
      Duration waitedFor) {
    this.dataSource = dataSource;
    this.lease = lease;
    this.waiterPid = waiterPid;
    this.waiting = waiting;
    this.waitedFor = waitedFor;
    String fence = FenceSchema.fenceTable(schema);
    String fenceLocks =
        " FROM pg_locks l WHERE l.pid = b.pid AND l.locktype = 'relation' AND l.database ="
            + " (SELECT oid FROM pg_database WHERE datname = current_database()) AND l.relation = '"
            + fence
            + "'::regclass AND l.granted";
    String staleBlockers =
        " FROM unnest(pg_blocking_pids(?)) AS b(pid) JOIN pg_stat_activity a ON a.pid = b.pid"
            + " WHERE EXISTS (SELECT 1 FROM pg_locks w WHERE w.pid = ? AND NOT w.granted"
            + " AND w.locktype IN ('transactionid', 'tuple'))"
            + " AND EXISTS (SELECT 1 FROM "
            + fence
            + " f WHERE f.resource = ? AND f.token < ?)"
            + " AND EXISTS (SELECT 1"
            + fenceLocks
            + " AND l.mode = 'RowShareLock')"
            + " AND NOT EXISTS (SELECT 1"
            + fenceLocks
            + " AND l.mode NOT IN ('AccessShareLock', 'RowShareLock'))";
    this.candidates =
        "SELECT b.pid, a.usename, a.state, a.wait_event, a.xact_start" + staleBlockers;
    this.endOne = "SELECT pg_terminate_backend(b.pid)" + staleBlockers + " AND b.pid = ?";
    this.thread = new Thread(this::run, "fencing-registration-watch");
    thread.setDaemon(true);
  }

  /**
   * Starts watching the backend {@code waiterPid}, which is about to run {@code waiting}: the
   * registration of {@code lease} in the fence of {@code schema}.
   *
   * @param waitedFor how long the registration has waited so far, for messages
   */
  public static StaleBlockerWatch start(
      DataSource dataSource,
      String schema,
      Lease lease,
      int waiterPid,
      Statement waiting,
      Duration waitedFor) {
    StaleBlockerWatch watch =
        new StaleBlockerWatch(dataSource, schema, lease, waiterPid, waiting, waitedFor);
    watch.thread.start();
    return watch;
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
              "registering token "
                  + lease.token()
                  + " for \""
                  + lease.resource()
                  + "\": after "
                  + waitedFor
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
      try (PreparedStatement find = connection.prepareStatement(candidates);
          PreparedStatement end = connection.prepareStatement(endOne)) {
        while (!stopped() && lease.isHeld()) {
          bind(find);
          try (ResultSet blocker = find.executeQuery()) {
            while (blocker.next()) {
              endBlocker(end, blocker);
            }
          }
          pause();
        }
      }
    } catch (SQLException e) {
      failure = e;
      cancelWaiting(e);
    } catch (RuntimeException e) {
      failure = new SQLException("watching the registration's blockers failed: " + e, e);
      cancelWaiting(failure);
    }
  }

  private void endBlocker(PreparedStatement end, ResultSet blocker) throws SQLException {
    int pid = blocker.getInt(1);
    String description =
        "backend pid "
            + pid
            + " (role "
            + blocker.getString(2)
            + ", state "
            + blocker.getString(3)
            + ", wait event "
            + blocker.getString(4)
            + ", transaction started "
            + blocker.getString(5)
            + ")";
    bind(end);
    end.setInt(5, pid);
    try (ResultSet ended = end.executeQuery()) {
      if (ended.next() && ended.getBoolean(1)) {
        log.warn(
            "registering token {} for \"{}\": ended {}, which still locked the fence row for an"
                + " older registration after {}",
            lease.token(),
            lease.resource(),
            description,
            waitedFor);
      }
    } catch (SQLException e) {
      if (!INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
        throw e;
      }
      throw new SQLException(
          "registering token "
              + lease.token()
              + " for \""
              + lease.resource()
              + "\": after "
              + waitedFor
              + " the fence row is still locked for an older registration by "
              + description
              + ", and this role may not end it: grant it pg_signal_backend (a superuser's"
              + " backend can only be ended by a superuser), or end that session, or switch"
              + " FenceOptions.endStaleBlockers off to wait up to the registration timeout"
              + " instead ("
              + e.getMessage()
              + ")",
          INSUFFICIENT_PRIVILEGE,
          e);
    }
  }

  private void bind(PreparedStatement statement) throws SQLException {
    statement.setInt(1, waiterPid);
    statement.setInt(2, waiterPid);
    statement.setString(3, lease.resource());
    statement.setLong(4, lease.token().value());
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
