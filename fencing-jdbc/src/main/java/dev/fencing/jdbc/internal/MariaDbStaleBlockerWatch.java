package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * MariaDB's side of {@link StaleBlockerWatch}: ends ({@code KILL CONNECTION}) the sessions that
 * keep a registration waiting on its fence row for an <em>older</em> registration, such as a holder
 * frozen in a long statement or whose client stopped reading a result.
 *
 * <p>While the registering connection waits, a second connection reads InnoDB's lock views ({@code
 * INNODB_TRX}, {@code INNODB_LOCK_WAITS}, {@code INNODB_LOCKS}, one consistent snapshot that InnoDB
 * refreshes at most every 100 ms) and ends a blocker only if all of this holds:
 *
 * <ul>
 *   <li>the registering connection's transaction waits ({@code LOCK WAIT}) for a lock on this
 *       resource's fence row;
 *   <li>the blocker has a transaction id of its own: InnoDB reports every transaction that has not
 *       written anything (only locking reads) with id 0, so such a blocker cannot be told from
 *       other read-only transactions and is never ended (the registration then waits up to its
 *       timeout);
 *   <li>every lock by which it blocks the registration is a shared ({@code S}) record lock on this
 *       resource's fence row (what the fence check's {@code LOCK IN SHARE MODE} takes), so
 *       registrations and anyone writing the row are never ended;
 *   <li>the fence row names a token lower than the registering lease's;
 *   <li>the blocker was seen so in two snapshots at least {@link #CONFIRM_MILLIS} apart, and the
 *       server's query id of its connection did not change from the first sighting to the {@code
 *       KILL} (checked in the same statement as the {@code KILL}): it ran no statement since, so
 *       the transaction the second snapshot showed holding the row is still its transaction.
 * </ul>
 *
 * <p>Reading other users' transactions in those views needs the {@code PROCESS} privilege, and
 * {@code KILL} of another user's connection {@code CONNECTION ADMIN} (or {@code SUPER}). Without
 * them the watch fails with SQLState {@code 42501} and cancels the waiting statement, so the
 * registration fails at once with a message that says which privilege is missing (and, for {@code
 * KILL}, names the blocker).
 */
public final class MariaDbStaleBlockerWatch extends BlockerWatch {

  private static final int KILL_DENIED = 1095;
  private static final int ACCESS_DENIED = 1227;

  /** Longer than InnoDB's lock-view cache may be old (100 ms), with room for a busy machine. */
  static final long CONFIRM_MILLIS = 250;

  private final long waiterThread;
  private final String candidates;
  private final Map<Long, Sighting> sightings = new HashMap<>();

  private record Sighting(long trxId, long queryId, long seenAtNanos) {}

  private MariaDbStaleBlockerWatch(
      DataSource dataSource,
      String schema,
      Lease lease,
      long waiterThread,
      Statement waiting,
      Duration waitedFor) {
    super(dataSource, lease, waiting, waitedFor);
    this.waiterThread = waiterThread;
    String fenceTable =
        MariaDbDialect.quote(schema) + "." + MariaDbDialect.quote(FenceSchema.FENCE_TABLE);
    String sharedOnTheRow =
        ".lock_table = '"
            + fenceTable
            + "' AND %1$s.lock_index = 'PRIMARY' AND %1$s.lock_type = 'RECORD' AND %1$s.lock_data"
            + " = ?";
    this.candidates =
        "SELECT b.trx_mysql_thread_id, b.trx_id, p.QUERY_ID, p.USER, p.COMMAND, p.STATE,"
            + " b.trx_started FROM information_schema.INNODB_TRX w"
            + " JOIN information_schema.INNODB_LOCK_WAITS lw ON lw.requesting_trx_id = w.trx_id"
            + " JOIN information_schema.INNODB_LOCKS rl ON rl.lock_id = lw.requested_lock_id"
            + " JOIN information_schema.INNODB_LOCKS bl ON bl.lock_id = lw.blocking_lock_id"
            + " JOIN information_schema.INNODB_TRX b ON b.trx_id = lw.blocking_trx_id"
            + " JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id"
            + " WHERE w.trx_mysql_thread_id = ? AND w.trx_state = 'LOCK WAIT'"
            + " AND b.trx_id <> 0 AND b.trx_mysql_thread_id <> w.trx_mysql_thread_id"
            + " AND rl"
            + String.format(sharedOnTheRow, "rl")
            + " AND bl"
            + String.format(sharedOnTheRow, "bl")
            + " AND bl.lock_mode = 'S'"
            + " AND NOT EXISTS (SELECT 1 FROM information_schema.INNODB_LOCK_WAITS lw2"
            + " JOIN information_schema.INNODB_LOCKS bl2 ON bl2.lock_id = lw2.blocking_lock_id"
            + " WHERE lw2.requesting_trx_id = w.trx_id AND lw2.blocking_trx_id = b.trx_id"
            + " AND NOT (bl2"
            + String.format(sharedOnTheRow, "bl2")
            + " AND bl2.lock_mode = 'S'))"
            + " AND EXISTS (SELECT 1 FROM "
            + fenceTable
            + " f WHERE f.resource = ? AND f.token < ?)";
  }

  /**
   * Starts watching the connection {@code waiterThread} (its {@code CONNECTION_ID()}), which is
   * about to run {@code waiting}: the registration of {@code lease} in the fence of {@code schema}.
   *
   * @param waitedFor how long the registration has waited so far, for messages
   */
  public static MariaDbStaleBlockerWatch start(
      DataSource dataSource,
      String schema,
      Lease lease,
      long waiterThread,
      Statement waiting,
      Duration waitedFor) {
    MariaDbStaleBlockerWatch watch =
        new MariaDbStaleBlockerWatch(dataSource, schema, lease, waiterThread, waiting, waitedFor);
    watch.begin();
    return watch;
  }

  @Override
  Sweep prepare(Connection watching) throws SQLException {
    PreparedStatement find = watching.prepareStatement(candidates);
    Statement kill = watching.createStatement();
    String lockData = "'" + lease.resource() + "'";
    find.setLong(1, waiterThread);
    find.setString(2, lockData);
    find.setString(3, lockData);
    find.setString(4, lockData);
    find.setString(5, lease.resource());
    find.setLong(6, lease.token().value());
    return () -> sweep(find, kill);
  }

  private void sweep(PreparedStatement find, Statement kill) throws SQLException {
    try (ResultSet blocker = find.executeQuery()) {
      while (blocker.next()) {
        seen(kill, blocker);
      }
    } catch (SQLException e) {
      throw e.getErrorCode() == ACCESS_DENIED ? noProcessPrivilege(e) : e;
    }
  }

  private SQLException noProcessPrivilege(SQLException e) {
    return insufficientPrivilege(
        ", and this user may not read InnoDB's lock views to find a stale holder: grant it"
            + " PROCESS (and CONNECTION ADMIN to end it)",
        e);
  }

  private void seen(Statement kill, ResultSet blocker) throws SQLException {
    long threadId = blocker.getLong(1);
    long trxId = blocker.getLong(2);
    long queryId = blocker.getLong(3);
    long now = System.nanoTime();
    Sighting first = sightings.get(threadId);
    if (first == null || first.trxId() != trxId || first.queryId() != queryId) {
      sightings.put(threadId, new Sighting(trxId, queryId, now));
      return;
    }
    if (now - first.seenAtNanos() < TimeUnit.MILLISECONDS.toNanos(CONFIRM_MILLIS)) {
      return;
    }
    String description =
        "connection "
            + threadId
            + " (user "
            + blocker.getString(4)
            + ", command "
            + blocker.getString(5)
            + ", state "
            + blocker.getString(6)
            + ", transaction "
            + trxId
            + " started "
            + blocker.getString(7)
            + ")";
    // thread and query ids come from the server as numbers: literals, no injection
    String killIfUnchanged =
        "BEGIN NOT ATOMIC IF (SELECT QUERY_ID FROM information_schema.PROCESSLIST WHERE ID = "
            + threadId
            + ") = "
            + queryId
            + " THEN KILL CONNECTION "
            + threadId
            + "; SELECT 1; ELSE SELECT 0; END IF; END";
    try {
      boolean ended = false;
      if (kill.execute(killIfUnchanged)) {
        try (ResultSet result = kill.getResultSet()) {
          ended = result.next() && result.getInt(1) == 1;
        }
      }
      while (kill.getMoreResults() || kill.getUpdateCount() != -1) {
        // drain the compound statement's results
      }
      sightings.remove(threadId);
      if (ended) {
        ended(description);
      }
    } catch (SQLException e) {
      if (e.getErrorCode() != KILL_DENIED) {
        throw e;
      }
      throw insufficientPrivilege(
          " for an older registration by "
              + description
              + ", and this user may not end it: grant it CONNECTION ADMIN, or end that"
              + " connection",
          e);
    }
  }
}
