package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.schema.DatabaseProduct;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * MariaDB (InnoDB). The fence is the table {@code `schema`.fence} of the database named by the
 * fence schema; user tables are quoted with backticks.
 *
 * <p>The guarded statements are {@link GuardedSql}'s, in its MariaDB dialect. The resource fence is
 * one predicate in the guarded statement itself: {@code EXISTS (SELECT 1 FROM fence f WHERE ...
 * LOCK IN SHARE MODE)}. Measured on MariaDB 10.11: a subquery read of another table inside {@code
 * UPDATE}, {@code DELETE} or {@code INSERT ... SELECT} is a locking (S) read under REPEATABLE READ
 * but a plain consistent read under READ COMMITTED (a concurrent registration then went through at
 * once); with {@code LOCK IN SHARE MODE} in the subquery the fence row is S-locked under both
 * levels, and a registration waits until the writer's transaction ends (auto-commit: until the
 * statement ends). A locking read always reads the latest committed row, so a writer whose snapshot
 * is older still sees a registration that committed meanwhile. No second statement and no session
 * state are needed.
 *
 * <p>MariaDB has no transaction-local settings: nothing is ever set on the session, so nothing can
 * leak through a pool. Consequences: rows of a batch inside a transaction carry the full predicate
 * (a primary-key lookup of a row this transaction already holds), and trigger mode is refused (see
 * {@link #checkOptions}).
 */
public final class MariaDbDialect implements FenceDialect {

  /** ER_LOCK_WAIT_TIMEOUT and ER_LOCK_DEADLOCK: the attempt may be retried. */
  private static final int LOCK_WAIT_TIMEOUT = 1205;

  private static final int LOCK_DEADLOCK = 1213;

  /** What {@code fence_refused} raises. */
  private static final String REFUSED = "ZF001";

  private static final int UNKNOWN_DATABASE = 1049;
  private static final int NO_SUCH_FUNCTION = 1305;

  /** Why trigger mode is refused on MariaDB. */
  static final String NO_TRIGGER_MODE =
      "trigger mode is not offered on MariaDB: the enforcement trigger would have to read the"
          + " writer's registration from session user variables (MariaDB has no transaction-local"
          + " settings), which outlive the transaction and leak to the next borrower of a pooled"
          + " connection, and TRUNCATE fires no trigger, so a strictly enforced table could still"
          + " be emptied without a token. Use GuardedStatements or FencedDsl, whose writes the"
          + " database checks in the statement itself";

  private final String schema;
  private final String fenceTable;
  private final GuardedSql guardedSql;

  /** The dialect for a fence in the database {@code schema}. */
  public MariaDbDialect(String schema) {
    this.schema = FenceSchema.requireIdentifier("fence schema", schema);
    this.fenceTable = quote(schema) + "." + quote(FenceSchema.FENCE_TABLE);
    this.guardedSql = GuardedSql.of(DatabaseProduct.MARIADB, schema);
  }

  @Override
  public String name() {
    return "MariaDB";
  }

  /** A locking read: under REPEATABLE READ a plain read would return the transaction's snapshot. */
  @Override
  public String readFence() {
    return "SELECT token, lease_id FROM " + fenceTable + " WHERE resource = ? LOCK IN SHARE MODE";
  }

  /**
   * Registers strictly above the stored token, or fails. The assignments run left to right and each
   * compares with the stored token, so {@code token} is assigned last: a newer token takes the row;
   * the same token of the same lease (a retry after a lost reply) leaves it as it is; anything else
   * calls the fence schema's {@code fence_refused}, which raises {@code ZF001}, so the statement
   * fails and writes nothing. The statement therefore succeeds only if the row names the lease
   * afterwards, which makes it complete on its own in auto-commit mode (with the driver's default
   * found-rows count, a row left as it was would report 1, like an insert). Parameters: resource,
   * token, lease id.
   */
  String register(long lockWaitSeconds) {
    String newer = "token < VALUES(token)";
    return "SET STATEMENT innodb_lock_wait_timeout = "
        + lockWaitSeconds
        + " FOR INSERT INTO "
        + fenceTable
        + " (resource, token, lease_id) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE"
        + " lease_id = IF("
        + newer
        + ", VALUES(lease_id), lease_id), registered_at = IF("
        + newer
        + ", CURRENT_TIMESTAMP(6), registered_at), token = IF("
        + newer
        + ", VALUES(token), IF(token = VALUES(token) AND lease_id = VALUES(lease_id), token, "
        + quote(schema)
        + ".fence_refused(resource, VALUES(token), token)))";
  }

  @Override
  public FenceGuards bind(Lease lease) {
    return guardedSql.bind(lease);
  }

  /**
   * Server-side prepared whatever the URL says, when the driver is MariaDB Connector/J: every row
   * carries the fence check, a subquery, which the text protocol has the server parse once per row
   * ({@link MariaDbServerPrepare}).
   */
  @Override
  public PreparedStatement prepareBatched(Connection connection, String sql) throws SQLException {
    return MariaDbServerPrepare.prepare(connection, sql);
  }

  @Override
  public boolean isLockTimeout(SQLException failure) {
    return failure.getErrorCode() == LOCK_WAIT_TIMEOUT || failure.getErrorCode() == LOCK_DEADLOCK;
  }

  @Override
  public String contractQuery(String schema) {
    return "SELECT "
        + quote(FenceSchema.requireIdentifier("fence schema", schema))
        + "."
        + FenceSchema.CONTRACT_FUNCTION
        + "()";
  }

  @Override
  public boolean isMissingContract(SQLException failure) {
    return failure.getErrorCode() == UNKNOWN_DATABASE || failure.getErrorCode() == NO_SUCH_FUNCTION;
  }

  @Override
  public String fenceSchemasQuery() {
    return "SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_NAME = '"
        + FenceSchema.CONTRACT_FUNCTION
        + "' AND ROUTINE_TYPE = 'FUNCTION' ORDER BY 1";
  }

  @Override
  public void checkOptions(boolean triggerMode) throws SQLFeatureNotSupportedException {
    if (triggerMode) {
      throw new SQLFeatureNotSupportedException(NO_TRIGGER_MODE, "0A000");
    }
  }

  @Override
  public String triggerSettings() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException(NO_TRIGGER_MODE, "0A000");
  }

  /**
   * One attempt: the upsert of {@link #register(long)}, which either leaves the fence naming the
   * lease or fails. In auto-commit mode (the pool's default) that is one round trip; on a
   * connection handed out with auto-commit off, the upsert and its commit.
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
    // InnoDB counts lock waits in whole seconds; the statement-scoped SET STATEMENT leaves the
    // session as it was. Past the bound, MariaDbStaleBlockerWatch ends the stale blockers it can
    // name.
    long seconds = Math.max(1, (lockTimeoutMillis + 999) / 1000);
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      try {
        long threadId = endBlockersAfter == null ? 0 : connectionId(connection);
        try (PreparedStatement register = connection.prepareStatement(register(seconds))) {
          register.setString(1, lease.resource());
          register.setLong(2, lease.token().value());
          register.setString(3, lease.leaseId());
          MariaDbStaleBlockerWatch watch =
              endBlockersAfter == null
                  ? null
                  : MariaDbStaleBlockerWatch.start(
                      dataSource, schema, lease, threadId, register, endBlockersAfter);
          BlockerWatch.around(watch, register::executeUpdate);
        } catch (SQLException e) {
          if (REFUSED.equals(e.getSQLState())) {
            // the fence holds this token for another lease, or a higher one: say which (as
            // StaleTokenException); should the fence name the lease after all, the refusal stands
            Registrations.requireFenceNames(connection, readFence(), lease);
          }
          throw e;
        }
        if (!autoCommit) {
          connection.commit();
        }
      } catch (SQLException | RuntimeException e) {
        if (!autoCommit) {
          Registrations.rollbackQuietly(connection, e);
        }
        throw e;
      }
    }
  }

  private static long connectionId(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("SELECT CONNECTION_ID()")) {
      row.next();
      return row.getLong(1);
    }
  }

  @Override
  public PlainSqlGuard plainSqlGuard(
      Connection catalog, String schema, boolean triggerMode, boolean rewrite) throws SQLException {
    Map<FencedTables.Relation, FencedTables.Table> tables = new HashMap<>();
    List<FencedTables.Edge> edges = new ArrayList<>();
    try (Statement statement = catalog.createStatement()) {
      try (ResultSet rows =
          statement.executeQuery(
              "SELECT DISTINCT TABLE_SCHEMA, TABLE_NAME FROM information_schema.COLUMNS"
                  + " WHERE COLUMN_NAME = '"
                  + FenceSchema.TOKEN_COLUMN
                  + "'")) {
        while (rows.next()) {
          FencedTables.Relation relation =
              new FencedTables.Relation(rows.getString(1), rows.getString(2));
          tables.put(
              relation, new FencedTables.Table(relation.schema(), relation.name(), true, false));
        }
      }
      // InnoDB's cascades write the referencing rows (and fire no trigger)
      try (ResultSet rows =
          statement.executeQuery(
              "SELECT UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME, CONSTRAINT_SCHEMA,"
                  + " TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS"
                  + " WHERE DELETE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT')"
                  + " OR UPDATE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT')")) {
        while (rows.next()) {
          edges.add(
              new FencedTables.Edge(
                  new FencedTables.Relation(rows.getString(1), rows.getString(2)),
                  new FencedTables.Relation(rows.getString(3), rows.getString(4)),
                  FencedTables.Through.CASCADE));
        }
      }
      // a view, or a trigger of another table, whose text names a fenced table may write it
      Pattern names = fencedNames(tables.keySet());
      if (names != null) {
        try (ResultSet rows =
            statement.executeQuery(
                "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS"
                    + " UNION ALL SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT"
                    + " FROM information_schema.TRIGGERS")) {
          while (rows.next()) {
            String text = rows.getString(3);
            java.util.regex.Matcher named = names.matcher(text == null ? "" : text);
            while (named.find()) {
              for (FencedTables.Relation table : tables.keySet()) {
                if (table.name().equalsIgnoreCase(named.group())) {
                  edges.add(
                      new FencedTables.Edge(
                          new FencedTables.Relation(rows.getString(1), rows.getString(2)),
                          table,
                          FencedTables.Through.RULE));
                }
              }
            }
          }
        }
      }
    }
    WriteScreen screen =
        new WriteScreen(
            FencedTables.of(tables, edges),
            table -> true,
            WriteScreen.Folding.MARIADB,
            "plain SQL is not rewritten on MariaDB");
    return new MariaDbPlainSql(screen);
  }

  private static Pattern fencedNames(Set<FencedTables.Relation> tables) {
    if (tables.isEmpty()) {
      return null;
    }
    return Pattern.compile(
        tables.stream()
            .map(table -> Pattern.quote(table.name()))
            .distinct()
            .collect(Collectors.joining("|", "(?i)(?<![A-Za-z0-9_$])(?:", ")(?![A-Za-z0-9_$])")));
  }

  /**
   * Plain SQL on MariaDB is not rewritten: a statement that may write (anything but one query that
   * reads the same under every reading) and names a fenced table, or a table whose writes cascade
   * into one, is refused before it reaches the database; everything else runs as written.
   */
  private record MariaDbPlainSql(WriteScreen screen) implements PlainSqlGuard {
    private static final Pattern READ_ONLY =
        Pattern.compile("(?is)\\s*\\(*\\s*(SELECT|SHOW|DESCRIBE|DESC|EXPLAIN)\\b.*");

    @Override
    public PlainDmlGuard.Result rewrite(String sql, Lease lease) {
      if (screen.isEmpty() || READ_ONLY.matcher(sql).matches() && SqlLexer.isOneStatement(sql)) {
        return PlainDmlGuard.PassThrough.INSTANCE;
      }
      return screen.plan(sql).resolve(null);
    }
  }

  static String quote(String identifier) {
    return "`" + identifier + "`";
  }
}
