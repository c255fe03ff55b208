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
public final class StaleBlockerWatch extends BlockerWatch {

  private final int waiterPid;
  private final String candidates;
  private final String endOne;

  private StaleBlockerWatch(
      DataSource dataSource,
      String schema,
      Lease lease,
      int waiterPid,
      Statement waiting,
      Duration waitedFor) {
    super(dataSource, lease, waiting, waitedFor);
    this.waiterPid = waiterPid;
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
    watch.begin();
    return watch;
  }

  @Override
  Sweep prepare(Connection watching) throws SQLException {
    PreparedStatement find = watching.prepareStatement(candidates);
    PreparedStatement end = watching.prepareStatement(endOne);
    return () -> sweep(find, end);
  }

  private void sweep(PreparedStatement find, PreparedStatement end) throws SQLException {
    bind(find);
    try (ResultSet blocker = find.executeQuery()) {
      while (blocker.next()) {
        endBlocker(end, blocker);
      }
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
        ended(description);
      }
    } catch (SQLException e) {
      if (!INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
        throw e;
      }
      throw insufficientPrivilege(
          " for an older registration by "
              + description
              + ", and this role may not end it: grant it pg_signal_backend (a superuser's"
              + " backend can only be ended by a superuser), or end that session",
          e);
    }
  }

  private void bind(PreparedStatement statement) throws SQLException {
    statement.setInt(1, waiterPid);
    statement.setInt(2, waiterPid);
    statement.setString(3, lease.resource());
    statement.setLong(4, lease.token().value());
  }
}
