package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.schema.DatabaseProduct;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * PostgreSQL: the fence SQL of {@link FenceSql}, the guarded SQL of {@link GuardedSql}, the
 * registration with stale-blocker ending.
 */
public final class PostgresDialect implements FenceDialect {

  private static final String LOCK_NOT_AVAILABLE = "55P03";

  /**
   * The settings of one attempt, local to its transaction: how long to wait for the row lock; a
   * bound on the attempt's own transaction, so that a registrant frozen between its update and its
   * commit cannot hold the fence row for longer than the lease time; and {@code synchronous_commit}
   * raised to at least {@code on} ({@code remote_apply} is kept), so that the commit returns only
   * once every synchronous standby has flushed the registration, whatever the connection's own
   * setting ({@code local}, {@code off} or {@code remote_write} would acknowledge a registration a
   * fail-over or a crash can lose).
   */
  private static final String ATTEMPT_SETTINGS =
      "SELECT pg_backend_pid(), set_config('lock_timeout', ?, true),"
          + " set_config('idle_in_transaction_session_timeout', ?, true),"
          + " set_config('synchronous_commit', CASE current_setting('synchronous_commit') WHEN"
          + " 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)";

  /**
   * The settings of {@link #ATTEMPT_SETTINGS} without the backend's pid, for the registration in
   * one round trip (pgjdbc knows the pid already).
   */
  private static final String ONE_TRIP_SETTINGS =
      "SELECT set_config('lock_timeout', ?, true),"
          + " set_config('idle_in_transaction_session_timeout', ?, true),"
          + " set_config('synchronous_commit', CASE current_setting('synchronous_commit') WHEN"
          + " 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)";

  private static final String TRIGGER_SETTINGS =
      "SELECT set_config('"
          + FenceSchema.SETTING_RESOURCE
          + "', ?, true), set_config('"
          + FenceSchema.SETTING_TOKEN
          + "', ?, true), set_config('"
          + FenceSchema.SETTING_LEASE_ID
          + "', ?, true), set_config('idle_in_transaction_session_timeout', ?, true)";

  private final FenceSql sql;
  private final GuardedSql guardedSql;
  private final String oneTrip;

  /** The dialect for a fence in {@code schema}. */
  public PostgresDialect(String schema) {
    this.sql = new FenceSql(schema);
    this.guardedSql = GuardedSql.of(DatabaseProduct.POSTGRESQL, schema);
    this.oneTrip = ONE_TRIP_SETTINGS + "; " + sql.register();
  }

  @Override
  public String name() {
    return "PostgreSQL";
  }

  @Override
  public String readFence() {
    return sql.readFence();
  }

  @Override
  public FenceGuards bind(Lease lease) {
    return guardedSql.bind(lease);
  }

  @Override
  public boolean isLockTimeout(SQLException failure) {
    return LOCK_NOT_AVAILABLE.equals(failure.getSQLState());
  }

  @Override
  public String contractQuery(String schema) {
    return FenceSchema.contractQuery(schema);
  }

  @Override
  public boolean isMissingContract(SQLException failure) {
    return "3F000".equals(failure.getSQLState()) || "42883".equals(failure.getSQLState());
  }

  @Override
  public String fenceSchemasQuery() {
    return FenceSchema.fenceSchemasQuery();
  }

  @Override
  public PlainSqlGuard plainSqlGuard(
      Connection catalog, String schema, boolean triggerMode, boolean rewrite) throws SQLException {
    PlainDmlGuard guard =
        new PlainDmlGuard(
            schema,
            FencedTables.read(catalog),
            triggerMode,
            rewrite,
            PlainDmlGuard.DEFAULT_CACHE_SIZE);
    return guard::rewrite;
  }

  @Override
  public void checkOptions(boolean triggerMode) {
    // PostgreSQL honours every option
  }

  @Override
  public String triggerSettings() {
    return TRIGGER_SETTINGS;
  }

  /**
   * One attempt. With pgjdbc in auto-commit mode it is one round trip: the settings and the upsert
   * are one prepared statement ({@code settings; upsert}), which pgjdbc sends with one Sync, so
   * they form one implicit transaction that commits at that Sync under the settings (a setting made
   * with {@code set_config(..., true)} holds until the transaction ends, its commit included). The
   * commit's warnings then arrive on the statement and are checked there. Otherwise (another
   * driver, or a connection handed out with auto-commit off) the attempt runs in an explicit
   * transaction: settings, upsert, commit.
   */
  @Override
  public void registerOnce(
      DataSource dataSource,
      String schema,
      Lease lease,
      long lockTimeoutMillis,
      Duration endBlockersAfter,
      long commitBoundNanos)
      throws SQLException {
    long commitDeadline = System.nanoTime() + commitBoundNanos;
    try (Connection connection = dataSource.getConnection()) {
      int pid = PgjdbcTransactions.backendPid(connection);
      if (pid == 0 || !connection.getAutoCommit()) {
        registerInTransaction(
            dataSource,
            connection,
            schema,
            lease,
            lockTimeoutMillis,
            endBlockersAfter,
            commitDeadline);
        return;
      }
      String what = registering(lease);
      boolean registered;
      try (PreparedStatement register = connection.prepareStatement(oneTrip)) {
        register.setString(1, lockTimeoutMillis + "ms");
        register.setString(2, Registrations.millisRoundedUp(lease.leaseTime()) + "ms");
        register.setString(3, lease.resource());
        register.setLong(4, lease.token().value());
        register.setString(5, lease.leaseId());
        StaleBlockerWatch watch =
            endBlockersAfter == null
                ? null
                : StaleBlockerWatch.start(
                    dataSource, schema, lease, pid, register, endBlockersAfter);
        registered =
            CommitBound.around(
                dataSource,
                connection,
                pid,
                commitDeadline - System.nanoTime(),
                what,
                () -> BlockerWatch.around(watch, () -> upsertReturnedRow(register)));
        CommitBound.failOnWarning(register.getWarnings(), what);
      }
      if (!registered) {
        // registered already by this very lease (a retry after a lost reply): not a refusal. The
        // upsert changed nothing, so there is nothing to make durable.
        Registrations.requireFenceNames(connection, sql.readFence(), lease);
      }
    }
  }

  /** Runs {@code settings; upsert} and returns whether the upsert returned its row. */
  private static boolean upsertReturnedRow(PreparedStatement register) throws SQLException {
    register.execute();
    while (!register.getMoreResults() && register.getUpdateCount() != -1) {
      // the settings' row came first; skip anything that is not the upsert's result set
    }
    try (ResultSet row = register.getResultSet()) {
      if (row == null) {
        throw new SQLException("the registration's upsert returned no result set", "XX000");
      }
      return row.next();
    }
  }

  private static String registering(Lease lease) {
    return "registering token " + lease.token() + " for \"" + lease.resource() + "\"";
  }

  private void registerInTransaction(
      DataSource dataSource,
      Connection connection,
      String schema,
      Lease lease,
      long lockTimeoutMillis,
      Duration endBlockersAfter,
      long commitDeadline)
      throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try {
      int pid;
      try (PreparedStatement settings = connection.prepareStatement(ATTEMPT_SETTINGS)) {
        settings.setString(1, lockTimeoutMillis + "ms");
        settings.setString(2, Registrations.millisRoundedUp(lease.leaseTime()) + "ms");
        try (ResultSet row = settings.executeQuery()) {
          row.next();
          pid = row.getInt(1);
        }
      }
      boolean registered;
      try (PreparedStatement register = connection.prepareStatement(sql.register())) {
        register.setString(1, lease.resource());
        register.setLong(2, lease.token().value());
        register.setString(3, lease.leaseId());
        StaleBlockerWatch watch =
            endBlockersAfter == null
                ? null
                : StaleBlockerWatch.start(
                    dataSource, schema, lease, pid, register, endBlockersAfter);
        registered =
            BlockerWatch.around(
                watch,
                () -> {
                  try (ResultSet row = register.executeQuery()) {
                    return row.next();
                  }
                });
      }
      if (!registered) {
        // registered already by this very lease (a retry after a lost reply): not a refusal
        Registrations.requireFenceNames(connection, sql.readFence(), lease);
      }
      CommitBound.commit(
          dataSource, connection, pid, commitDeadline - System.nanoTime(), registering(lease));
    } catch (SQLException | RuntimeException e) {
      Registrations.rollbackQuietly(connection, e);
      throw e;
    } finally {
      Registrations.restoreAutoCommit(connection, autoCommit);
    }
  }
}
