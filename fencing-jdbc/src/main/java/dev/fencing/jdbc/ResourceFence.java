package dev.fencing.jdbc;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.internal.FenceClassifier;
import dev.fencing.jdbc.internal.FenceDialect;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * The resource fence in the database (PostgreSQL, or MariaDB with InnoDB): per resource, the token
 * and lease id of the holder registered last. A holder registers right after acquiring, and only
 * with a token strictly above the stored one; from then on, writes guarded by an older registration
 * are rejected.
 *
 * <p>Registration waits for in-flight guarded writes of the previous holder (they hold the fence
 * row {@code FOR SHARE} until they commit), retrying under {@code lock_timeout} until {@link
 * FenceOptions#registrationTimeout()}. A holder frozen inside a transaction delays it by about a
 * quarter of the lease time: see {@link #register(Lease)}.
 */
public final class ResourceFence {

  private static final String LOCK_NOT_AVAILABLE = "55P03";
  private static final Duration MAX_BOUND = Duration.ofNanos(Long.MAX_VALUE / 2);

  private final DataSource dataSource;
  private final FenceOptions options;
  private volatile FenceDialect dialect;
  private volatile boolean contractChecked;

  /**
   * Creates the fence.
   *
   * @param dataSource connections to the database holding the fence table (not a fenced one)
   * @param options the fence options
   * @throws NullPointerException if an argument is null
   */
  public ResourceFence(DataSource dataSource, FenceOptions options) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.options = Objects.requireNonNull(options, "options");
  }

  /** {@return the options} */
  public FenceOptions options() {
    return options;
  }

  /**
   * Registers {@code lease} as the resource's current holder.
   *
   * <p>The previous holder's transactions that locked the fence row (guarded writes in flight) are
   * waited for, for at most about a quarter of the lease time ({@code lease.leaseTime()}), counted
   * from the call, so that even a lease that is never renewed ends them before it is judged lost:
   *
   * <ul>
   *   <li>a transaction left idle is ended by the server ({@code
   *       idle_in_transaction_session_timeout}, set to the lease time by {@link FencedDataSource});
   *   <li>one that is still active after that long (a long statement, or a client that stopped
   *       reading a result, which neither {@code statement_timeout} nor a cancel request ends) is
   *       ended with {@code pg_terminate_backend} when {@link FenceOptions#endStaleBlockers()} is
   *       on (the default), and rolls back. Only sessions that lock this resource's fence row for a
   *       registration older than {@code lease}'s are ended, and only while {@code lease} is held.
   *       That needs superuser, membership in the blocker's role, or {@code pg_signal_backend};
   *       without it registration fails at once with SQLState {@code 42501}. On MariaDB they are
   *       ended with {@code KILL CONNECTION} (needs {@code PROCESS} and {@code CONNECTION ADMIN}),
   *       only those whose transaction has written (InnoDB names read-only transactions 0, so those
   *       cannot be told apart and are waited for): see docs/mariadb.md.
   * </ul>
   *
   * <p>On PostgreSQL the registration's transaction raises {@code synchronous_commit} to at least
   * {@code on} and stores the server's fence epoch (its WAL timeline), so a registration is durable
   * on every synchronous standby before this returns, and one made before a promotion names no
   * holder after it: see docs/operations.md.
   *
   * <p>No holder whose lease is still valid can be ended this way: a lease is granted only after
   * the previous one expired or was released, and registration only runs while {@code lease} is
   * held.
   *
   * @param lease a freshly acquired lease
   * @throws StaleTokenException if the fence already holds this token or a higher one for another
   *     lease (Redis handed out a token the database has seen: see {@link FencedLeaseManager})
   * @throws SQLTimeoutException if the fence row stayed locked for the whole registration timeout
   * @throws SQLNonTransientException (PostgreSQL) if the commit came back with a warning (a wait
   *     for the synchronous standby that was cancelled: committed locally, maybe not replicated),
   *     or still waited for the synchronous standby when the registration timeout ran out (its
   *     backend was then ended); the registration may have committed on the primary only, and must
   *     be treated as failed
   * @throws SQLNonTransientException (SQLState {@code 3F000}) at the first registration, if {@link
   *     FenceOptions#schema()} is not a fence schema the migrations created (the message names the
   *     ones that exist), or its migrations are older than this library
   * @throws SQLException if the database failed, or (SQLState {@code 42501}) a stale blocker
   *     outlived the lease time and this role may not end it
   * @throws java.sql.SQLFeatureNotSupportedException (SQLState {@code 0A000}) at the first
   *     registration, if the database is neither PostgreSQL nor MariaDB, or if {@link
   *     FenceOptions#triggerMode()} is on with MariaDB (see docs/mariadb.md)
   * @throws dev.fencing.core.LeaseLostException if the lease is already known lost
   * @throws NullPointerException if {@code lease} is null
   */
  public void register(Lease lease) throws SQLException {
    Objects.requireNonNull(lease, "lease");
    lease.checkHeld();
    if (!contractChecked) {
      checkContract();
    }
    long start = System.nanoTime();
    long deadline = start + nanos(options.registrationTimeout());
    long bound = start + nanos(blockerBound(lease));
    SQLException lastTimeout;
    do {
      long now = System.nanoTime();
      boolean pastBound = now - bound >= 0;
      long attempt = Math.min(nanos(options.registrationLockTimeout()), deadline - now);
      if (!pastBound) {
        attempt = Math.min(attempt, bound - now);
      }
      try {
        registerOnce(
            lease,
            millisRoundedUp(attempt),
            pastBound && options.endStaleBlockers()
                ? Duration.ofNanos(now - start).truncatedTo(ChronoUnit.MILLIS)
                : null,
            deadline - now);
        return;
      } catch (SQLException e) {
        if (!dialect.isLockTimeout(e)) {
          throw e;
        }
        lastTimeout = e;
        lease.checkHeld();
      }
    } while (System.nanoTime() - deadline < 0);
    throw new SQLTimeoutException(
        "registering token "
            + lease.token()
            + " for \""
            + lease.resource()
            + "\" waited longer than "
            + options.registrationTimeout()
            + " for the fence row: a previous holder's transaction still holds it",
        LOCK_NOT_AVAILABLE,
        lastTimeout);
  }

  /**
   * Returns the token registered for {@code resource}, if any.
   *
   * @param resource the resource
   * @return the registered token
   * @throws SQLException if the database failed
   */
  public OptionalLong currentToken(String resource) throws SQLException {
    Objects.requireNonNull(resource, "resource");
    return readFence(
        resource, row -> row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty());
  }

  /**
   * What the fence says about {@code lease} now: it names it ({@code NO_SUCH_ROW}), holds a lower
   * token or none ({@code NOT_REGISTERED}: a fail-over lost the registration), or names another
   * registration, a newer one or this one made before the server's last promotion ({@code STALE}).
   */
  FenceClassifier.Verdict check(Lease lease) throws SQLException {
    return readFence(
        lease.resource(),
        row ->
            row.next()
                ? FenceClassifier.ofFence(lease, row.getLong(1), row.getString(2))
                : FenceClassifier.ofFence(lease, 0, null));
  }

  /** What one row of the fence read (token, lease id on the current epoch) becomes. */
  private interface FenceRow<T> {
    T read(ResultSet row) throws SQLException;
  }

  /** Reads the fence of {@code resource} on a connection of its own. */
  private <T> T readFence(String resource, FenceRow<T> result) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement read = connection.prepareStatement(dialect(connection).readFence())) {
      read.setString(1, resource);
      try (ResultSet row = read.executeQuery()) {
        return result.read(row);
      }
    }
  }

  /**
   * Once per fence: the configured schema must be one the migrations created, at this library's
   * contract version, so a schema given to the migrations and another given to {@link FenceOptions}
   * fail loudly at the first registration instead of at some later write.
   */
  private void checkContract() throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      FenceDialect dialect = dialect(connection);
      dialect.checkOptions(options.triggerMode());
      int version;
      try (PreparedStatement read =
              connection.prepareStatement(dialect.contractQuery(options.schema()));
          ResultSet row = read.executeQuery()) {
        row.next();
        version = row.getInt(1);
      } catch (SQLException e) {
        if (!dialect.isMissingContract(e)) {
          throw e;
        }
        List<String> schemas = new ArrayList<>();
        try (PreparedStatement read = connection.prepareStatement(dialect.fenceSchemasQuery());
            ResultSet rows = read.executeQuery()) {
          while (rows.next()) {
            schemas.add(rows.getString(1));
          }
        }
        throw new SQLNonTransientException(
            "FenceOptions.schema() is \""
                + options.schema()
                + "\", but that schema holds no fence created by fencing-migrations (fence schemas"
                + " in this database: "
                + (schemas.isEmpty() ? "none" : schemas)
                + "); run the migrations with --schema "
                + options.schema()
                + (schemas.isEmpty()
                    ? ""
                    : ", or use FenceOptions.defaults().withSchema(\"" + schemas.get(0) + "\")"),
            "3F000",
            e);
      }
      if (version < FenceSchema.CONTRACT_VERSION) {
        throw new SQLNonTransientException(
            "the fence schema \""
                + options.schema()
                + "\" was migrated to contract "
                + version
                + ", this library needs "
                + FenceSchema.CONTRACT_VERSION
                + ": run fencing-migrations again",
            "3F000");
      }
    }
    contractChecked = true;
  }

  private void registerOnce(
      Lease lease, long lockTimeoutMillis, Duration endBlockersAfter, long commitBoundNanos)
      throws SQLException {
    dialect.registerOnce(
        dataSource, options.schema(), lease, lockTimeoutMillis, endBlockersAfter, commitBoundNanos);
  }

  /**
   * The dialect of the fence's database, read from the first connection's metadata.
   *
   * @throws java.sql.SQLFeatureNotSupportedException if the database is not one the library speaks
   */
  private FenceDialect dialect(Connection connection) throws SQLException {
    FenceDialect known = dialect;
    if (known == null) {
      known = FenceDialect.of(connection, options.schema());
      dialect = known;
    }
    return known;
  }

  /**
   * How long a registration waits for the previous holder's transactions before it ends the stale
   * ones: a quarter of the lease time. A lease that is never renewed is judged lost once its lease
   * time minus its safety margin has passed, and the margin may be up to two thirds of the lease
   * time, so the registration of a non-renewing lease must end its blockers before a third of it; a
   * quarter leaves the acquisition itself some time. Ending them earlier is safe: only sessions
   * that lock the fence row for an older registration are ended, and only while this lease is held,
   * so none of them belongs to a holder whose lease is still valid.
   */
  static Duration blockerBound(Lease lease) {
    return lease.leaseTime().dividedBy(4);
  }

  /** Saturates instead of overflowing: a bound beyond ~146 years is as good as none. */
  private static long nanos(Duration duration) {
    return duration.compareTo(MAX_BOUND) > 0 ? MAX_BOUND.toNanos() : duration.toNanos();
  }

  /**
   * PostgreSQL takes timeouts in whole milliseconds, and 0 means "wait forever": never round down
   * to it.
   */
  private static long millisRoundedUp(long nanos) {
    long millis = (Math.max(nanos, 1) + 999_999) / 1_000_000;
    return Math.min(millis, Integer.MAX_VALUE);
  }
}
