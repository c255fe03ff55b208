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
   * Raises {@code synchronous_commit} to at least {@code on} ({@code remote_apply} is kept) for the
   * rest of the transaction, so that its commit returns only once every synchronous standby has
   * flushed the registration, whatever the connection's own setting ({@code local}, {@code off} or
   * {@code remote_write} would acknowledge a registration a fail-over or a crash can lose).
   */
  private static final String DURABLE_COMMIT =
      "set_config('synchronous_commit', CASE current_setting('synchronous_commit') WHEN"
          + " 'remote_apply' THEN 'remote_apply' ELSE 'on' END, true)";

  /**
   * The settings of one attempt in a transaction of its own, local to it: how long to wait for the
   * row lock; a bound on the transaction, so that a registrant frozen between its update and its
   * commit cannot hold the fence row for longer than the lease time; and {@link #DURABLE_COMMIT}.
   */
  private static final String ATTEMPT_SETTINGS =
      "SELECT pg_backend_pid(), set_config('lock_timeout', ?, true),"
          + " set_config('idle_in_transaction_session_timeout', ?, true), "
          + DURABLE_COMMIT;

  /**
   * The settings of a registration in one auto-commit statement, as the condition of {@link
   * FenceSql#registerUnder}: the lock wait's bound and {@link #DURABLE_COMMIT}. A single statement
   * leaves no time idle in its transaction, so it needs no bound on that.
   */
  private static final String ONE_STATEMENT_SETTINGS =
      "set_config('lock_timeout', ?, true) IS NOT NULL AND " + DURABLE_COMMIT + " IS NOT NULL";

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
  private final String oneStatement;

  /** The dialect for a fence in {@code schema}. */
  public PostgresDialect(String schema) {
    this.sql = new FenceSql(schema);
    this.guardedSql = GuardedSql.of(DatabaseProduct.POSTGRESQL, schema);
    this.oneStatement = sql.registerUnder(ONE_STATEMENT_SETTINGS);
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
   * One attempt. With pgjdbc in auto-commit mode it is one statement, {@link
   * FenceSql#registerUnder} with {@link #ONE_STATEMENT_SETTINGS}: its settings hold until its
   * implicit transaction ends, its commit included, and the commit's warnings arrive on the
   * statement, where they are checked. Otherwise (another driver, or a connection handed out with
   * auto-commit off) the attempt runs in an explicit transaction: settings, upsert, commit.
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
      try (PreparedStatement register = connection.prepareStatement(oneStatement)) {
        register.setString(1, lease.resource());
        register.setLong(2, lease.token().value());
        register.setString(3, lease.leaseId());
        register.setString(4, lockTimeoutMillis + "ms");
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
                () ->
                    BlockerWatch.around(
                        watch,
                        () -> {
                          try (ResultSet row = register.executeQuery()) {
                            return row.next();
                          }
                        }));
        CommitBound.failOnWarning(register.getWarnings(), what);
      }
      if (!registered) {
        // registered already by this very lease (a retry after a lost reply): not a refusal. The
        // upsert changed nothing, so there is nothing to make durable.
        Registrations.requireFenceNames(connection, sql.readFence(), lease);
      }
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
