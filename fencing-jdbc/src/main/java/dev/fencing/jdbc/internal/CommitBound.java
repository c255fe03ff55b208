package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLWarning;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * The commit of a PostgreSQL registration, bounded and checked.
 *
 * <p>With a synchronous standby configured, a commit waits (state {@code SyncRep}) until the
 * standby confirmed it, without any bound of its own. Cancelling that wait ({@code
 * pg_cancel_backend}, as HA tooling does) makes PostgreSQL report the commit as done with only a
 * WARNING ("canceling wait for synchronous replication": committed locally, maybe not replicated),
 * which a fail-over then loses. So:
 *
 * <ul>
 *   <li>a commit still waiting for replication when the registration's time is up is ended with
 *       {@code pg_terminate_backend} from a second connection (never cancelled): the client then
 *       sees an error, not a silent local commit;
 *   <li>any warning on the commit fails the registration: a registration commit has no other reason
 *       to warn, and one that may not be replicated must not be handed out.
 * </ul>
 *
 * <p>Either way the registration may have committed on the primary: the fence is then ahead of
 * every holder, which refuses stale writes and costs only the next acquisition.
 */
final class CommitBound {

  /**
   * The bounds of commits in progress: nearly all of them are disarmed long before they expire, and
   * arming one must not wake a thread in the registration's path.
   */
  private static final SparseTimer TIMER = new SparseTimer("fencing-registration-commit-bound");

  private static final String END_IF_WAITING =
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ? AND wait_event ="
          + " 'SyncRep'";

  private CommitBound() {}

  /**
   * Commits {@code connection} (backend {@code pid}) and fails unless PostgreSQL reported the
   * commit durable without a warning within {@code boundNanos}.
   *
   * @param what the registration, for messages
   * @throws SQLException if the commit failed, was ended at the bound, or came with a warning
   */
  static void commit(
      DataSource dataSource, Connection connection, int pid, long boundNanos, String what)
      throws SQLException {
    connection.clearWarnings();
    around(
        dataSource,
        connection,
        pid,
        boundNanos,
        what,
        () -> {
          connection.commit();
          return null;
        });
    failOnWarning(connection.getWarnings(), what);
  }

  /**
   * Runs {@code committing}, a call on {@code connection} (backend {@code pid}) that commits, and
   * ends the backend if it still waits for replication after {@code boundNanos}. The caller checks
   * the warnings of whatever the call reported them on, with {@link #failOnWarning}.
   *
   * @param what the registration, for messages
   * @throws SQLException if the call failed, or was ended at the bound
   */
  static <T> T around(
      DataSource dataSource,
      Connection connection,
      int pid,
      long boundNanos,
      String what,
      SqlCall<T> committing)
      throws SQLException {
    AtomicBoolean done = new AtomicBoolean();
    AtomicBoolean ended = new AtomicBoolean();
    SparseTimer.Deadline watch =
        TIMER.arm(
            System.nanoTime() + Math.max(0, boundNanos),
            () -> endWhileWaiting(dataSource, connection, pid, done, ended));
    try {
      return committing.call();
    } catch (SQLException e) {
      if (ended.get()) {
        throw new SQLNonTransientException(
            what
                + ": the commit still waited for the synchronous standby when the registration"
                + " timeout ran out, so its backend was ended; the registration may have committed"
                + " on the primary only, and the lease is not handed out",
            "08006",
            e);
      }
      throw e;
    } finally {
      done.set(true);
      watch.disarm();
    }
  }

  /**
   * Fails if a registration's commit came with {@code warning} (the first of a chain, or null): a
   * registration has no other reason to warn than a cancelled wait for replication.
   *
   * @throws SQLNonTransientException if {@code warning} is not null
   */
  static void failOnWarning(SQLWarning warning, String what) throws SQLNonTransientException {
    if (warning != null) {
      throw new SQLNonTransientException(
          what
              + ": PostgreSQL reported the commit with a warning (\""
              + warning.getMessage()
              + "\"): a commit whose wait for synchronous replication was cancelled is durable on"
              + " the primary only and might not have been replicated, so a fail-over could lose"
              + " it; the lease is not handed out",
          "01000",
          warning);
    }
  }

  /** Ends the backend while its commit waits for replication, until the commit returned. */
  private static void endWhileWaiting(
      DataSource dataSource, Connection waiting, int pid, AtomicBoolean done, AtomicBoolean ended) {
    try (Connection watching = dataSource.getConnection();
        PreparedStatement end = watching.prepareStatement(END_IF_WAITING)) {
      watching.setAutoCommit(true);
      end.setInt(1, pid);
      while (!done.get()) {
        try (ResultSet row = end.executeQuery()) {
          if (row.next() && row.getBoolean(1)) {
            ended.set(true);
            return;
          }
        }
        Thread.sleep(20);
      }
    } catch (SQLException | RuntimeException e) {
      // no second connection (or no right to end the backend): close the socket, so the caller
      // sees an error rather than a commit that may come back unreplicated
      if (!done.get()) {
        ended.set(true);
        try {
          waiting.abort(Runnable::run);
        } catch (SQLException | RuntimeException ignored) {
          // nothing more can be done from here
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
