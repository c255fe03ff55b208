package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.internal.ResourceNames;
import dev.fencing.schema.DatabaseProduct;
import dev.fencing.schema.FenceSchema;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The one writer of guarded SQL: the stamp, the row guard, the fence check, the batch verify and
 * the shapes of the guarded INSERT, UPDATE, DELETE and upsert. Every entry point goes through it:
 * {@code GuardedStatements} and the fenced connection's statements ({@link #bind(Lease)}), {@code
 * FencedDsl} (its fence check, its MariaDB upsert) and the plain-SQL rewriter ({@link #fenceCheck},
 * {@link #rowGuard}, with its slots in place of the literals).
 *
 * <p>What differs between databases is the small {@link Dialect} below (quoting, the lock clause,
 * the epoch, the upsert tail, the batch form, the trigger settings); the dialect is chosen in one
 * place, {@link #of(DatabaseProduct, String)}, from the {@link DatabaseProduct} the driver reports.
 *
 * <p>Guarded statements carry the writer's registration as literals, so they need no session state
 * and bind no extra parameters: the caller's parameter indexes stay as written.
 */
public final class GuardedSql {

  private static final int MAX_CACHED_STATEMENTS = 256;
  private static final String GUARD_VERIFIED = "fencing.guard_verified";
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * What differs between the databases fencing speaks; the builder writes everything else. Each
   * method returns a piece of SQL text, written with the leading space or {@code AND} it needs.
   */
  interface Dialect {

    /** Quotes one validated identifier. */
    String quote(String identifier);

    /** A fence column ({@code fence_token}, {@code fence_resource}) as the guard writes it. */
    String fenceColumn(String column);

    /** The fence table of {@code schema}, quoted. */
    String fenceTable(String schema);

    /**
     * The condition, beyond token and lease id, that the fence row {@code alias} names the
     * registration on the server's current epoch; empty where there is no epoch.
     */
    String currentEpoch(String alias);

    /**
     * The fence check's bound on how long the writer's transaction may sit idle, {@code
     * idleTimeout} a literal; empty where the database has no transaction-local setting for it.
     */
    String idleBound(String idleTimeout);

    /** The clause that share-locks the fence row {@code alias} until the transaction ends. */
    String shareLock(String alias);

    /** The alias of the target of a guarded INSERT, for the upsert tail; may be empty. */
    String insertTargetAlias();

    /** What a {@code SELECT} of literals without a table needs before its {@code WHERE}. */
    String selectWithoutTable();

    /** The column of the fence that reads the lease id, null for an older epoch's registration. */
    String leaseIdOnCurrentEpoch();

    /**
     * The tail that turns the guarded INSERT of {@code columns} into an upsert on {@code
     * conflictColumns} (both validated), keeping a stored row written by a newer holder.
     */
    String upsertTail(Bound bound, List<String> columns, List<String> conflictColumns);

    /**
     * What the rows of a batch inside a transaction check in place of the fence check: a check of
     * {@code bound}'s batch marker, which {@link #verify} set; null where the database has no
     * transaction-local state, so that batched rows carry the full fence check.
     *
     * @param tableRow whether the check is evaluated per row of a table (UPDATE, DELETE) rather
     *     than once for the inserted row
     */
    String markedRows(Bound bound, boolean tableRow);

    /**
     * The verify before a batch inside a transaction: locks the fence row and returns one row if it
     * names {@code bound}'s registration (setting its batch marker where {@link #markedRows} checks
     * one); no row otherwise.
     */
    String verify(Bound bound);

    /** The trigger-mode settings of {@code bound}'s registration, or null without trigger mode. */
    String triggerSettings(Bound bound);

    /** How the fragments of guarded statements are lexed. */
    SqlLexer.Dialect lexer();
  }

  private final Dialect dialect;
  private final String fenceTable;

  private GuardedSql(Dialect dialect, String schema) {
    this.dialect = dialect;
    this.fenceTable = dialect.fenceTable(FenceSchema.requireIdentifier("fence schema", schema));
  }

  /**
   * The guarded SQL of {@code product} for a fence in {@code schema}: the one place a database
   * product becomes a dialect of guarded SQL.
   *
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   */
  public static GuardedSql of(DatabaseProduct product, String schema) {
    Objects.requireNonNull(product, "product");
    return new GuardedSql(
        switch (product) {
          case POSTGRESQL -> new Postgres(schema);
          case MARIADB -> new MariaDb(schema);
        },
        schema);
  }

  /**
   * The resource fence as a predicate on the fence row {@code alias}, its parts given as SQL
   * (literals, or a caller's placeholders): true only while the fence names the registration,
   * share-locking the fence row until the writer's transaction ends.
   */
  public String fenceCheck(
      String alias, String resource, String token, String leaseId, String idleTimeout) {
    return "EXISTS (SELECT 1 FROM "
        + fenceTable
        + " "
        + alias
        + " WHERE "
        + alias
        + ".resource = "
        + resource
        + registration(alias, token, leaseId)
        + dialect.idleBound(idleTimeout)
        + dialect.shareLock(alias)
        + ")";
  }

  /** The fence row {@code alias} names the token and lease id (on the current epoch). */
  private String registration(String alias, String token, String leaseId) {
    return " AND "
        + alias
        + ".token = "
        + token
        + " AND "
        + alias
        + ".lease_id = "
        + leaseId
        + dialect.currentEpoch(alias);
  }

  /**
   * The row guard: the stored row was not written by a newer holder of the same resource (rows of
   * another resource are not compared). Its parts are SQL (columns, literals or placeholders);
   * {@code resourceColumn} null for a table without one.
   */
  public static String rowGuard(
      String tokenColumn, String token, String resourceColumn, String resource) {
    if (resourceColumn == null) {
      return tokenColumn + " <= " + token;
    }
    return "(" + tokenColumn + " <= " + token + " OR " + resourceColumn + " <> " + resource + ")";
  }

  /**
   * The fence's lease id as a column expression that is null for a registration of an older epoch,
   * for reads that classify a refusal.
   */
  public String leaseIdOnCurrentEpoch() {
    return dialect.leaseIdOnCurrentEpoch();
  }

  /**
   * Returns the guarded SQL of one lease.
   *
   * @throws IllegalArgumentException if the lease's resource or id could not be a literal safely
   */
  public Bound bind(Lease lease) {
    return new Bound(lease);
  }

  /**
   * A guarded statement in two forms, both enforced by the database.
   *
   * @param sql the row guard and the fence check ({@link Bound#fenceHeld()}): for single executions
   *     and auto-commit batches
   * @param batched for the rows of a batch inside a transaction: the row guard and a check of the
   *     registration's batch marker in place of the fence lookup. Its rows write only after {@link
   *     Bound#verify()}, in the same transaction, locked the fence row and set that marker; without
   *     it a row writes nothing. Where the database has no transaction-local state, the same as
   *     {@code sql}.
   */
  public record Guarded(String sql, String batched) {

    /** Checks that both forms are there. */
    public Guarded {
      Objects.requireNonNull(sql, "sql");
      Objects.requireNonNull(batched, "batched");
    }

    /** A statement whose batched rows are {@code sql} itself, fence lookup included. */
    public static Guarded checkedPerRow(String sql) {
      return new Guarded(sql, sql);
    }
  }

  /**
   * A fresh, unguessable batch marker: 32 hexadecimal digits from a {@link SecureRandom}. No
   * session holds it unless a verify of its registration set it in the open transaction.
   */
  private static String newBatchMarker() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Guarded statements for one registration, which is written into them as literals. */
  public final class Bound implements FenceGuards {
    private final Map<List<Object>, Guarded> cache = new ConcurrentHashMap<>();
    private final String token;
    private final String resourceLiteral;
    private final String leaseIdLiteral;
    private final String idleTimeout;
    private final String marker;
    private final String stamp;
    private final String rowGuard;
    private final String fenceHeld;
    private final String verify;
    private final String triggerSettings;

    private Bound(Lease lease) {
      String resource = ResourceNames.validate(lease.resource());
      this.leaseIdLiteral = "'" + FenceSql.validLeaseId(lease.leaseId()) + "'";
      this.token = Long.toString(lease.token().value());
      this.resourceLiteral = "'" + resource + "'";
      this.idleTimeout = Math.max(1, lease.leaseTime().toMillis()) + "ms";
      String tokenColumn = dialect.fenceColumn(FenceSchema.TOKEN_COLUMN);
      String resourceColumn = dialect.fenceColumn(FenceSchema.RESOURCE_COLUMN);
      this.stamp = tokenColumn + " = " + token + ", " + resourceColumn + " = " + resourceLiteral;
      this.rowGuard = GuardedSql.rowGuard(tokenColumn, token, resourceColumn, resourceLiteral);
      // Drawn per registration, not per transaction or statement: the statements keep one text,
      // so the driver's and the server's prepared statements are reused from batch to batch.
      this.marker = newBatchMarker();
      this.fenceHeld = fenceCheck("f", resourceLiteral, token, leaseIdLiteral, idleLiteral());
      this.verify = dialect.verify(this);
      this.triggerSettings = dialect.triggerSettings(this);
    }

    String token() {
      return token;
    }

    String resourceLiteral() {
      return resourceLiteral;
    }

    String leaseIdLiteral() {
      return leaseIdLiteral;
    }

    String idleLiteral() {
      return "'" + idleTimeout + "'";
    }

    String rowGuard() {
      return rowGuard;
    }

    String marker() {
      return marker;
    }

    String fenceTable() {
      return fenceTable;
    }

    /** The fence row {@code alias} names this registration (on the current epoch). */
    String registration(String alias) {
      return GuardedSql.this.registration(alias, token, leaseIdLiteral);
    }

    /**
     * The resource fence as a predicate: true only while the fence names this registration, locking
     * the fence row until commit (and, on PostgreSQL, bounding how long the transaction may then
     * sit idle by the lease time). PostgreSQL evaluates it once per statement (an InitPlan).
     */
    @Override
    public String fenceHeld() {
      return fenceHeld;
    }

    @Override
    public String verify() {
      return verify;
    }

    @Override
    public String triggerSettings() {
      if (triggerSettings == null) {
        throw new UnsupportedOperationException("trigger mode is refused on MariaDB");
      }
      return triggerSettings;
    }

    @Override
    public String idleTimeout() {
      return idleTimeout;
    }

    @Override
    public Guarded update(String table, String assignments, String condition) {
      SqlLexer.requireFragment(dialect.lexer(), "assignments", assignments);
      SqlLexer.requireFragment(dialect.lexer(), "condition", condition);
      return cached(
          Arrays.asList("update", table, assignments, condition),
          () ->
              rowChecked(
                  "UPDATE "
                      + quoteTable(table)
                      + " SET "
                      + assignments
                      + ", "
                      + stamp
                      + " WHERE ("
                      + condition
                      + ") AND "
                      + rowGuard
                      + " AND "));
    }

    @Override
    public Guarded delete(String table, String condition) {
      SqlLexer.requireFragment(dialect.lexer(), "condition", condition);
      return cached(
          Arrays.asList("delete", table, condition),
          () ->
              rowChecked(
                  "DELETE FROM "
                      + quoteTable(table)
                      + " WHERE ("
                      + condition
                      + ") AND "
                      + rowGuard
                      + " AND "));
    }

    @Override
    public Guarded insert(String table, List<String> columns) {
      return cached(Arrays.asList("insert", table, columns), () -> inserted(table, columns, ""));
    }

    /**
     * A guarded upsert: inserts, or on conflict updates the other columns only if the stored row
     * was not written by a newer holder.
     */
    @Override
    public Guarded upsert(String table, List<String> columns, List<String> conflictColumns) {
      if (conflictColumns.isEmpty()) {
        throw new IllegalArgumentException("an upsert needs at least one conflict column");
      }
      for (String column : conflictColumns) {
        if (!columns.contains(column)) {
          throw new IllegalArgumentException(
              "conflict column \"" + column + "\" is not among the inserted columns " + columns);
        }
      }
      return cached(
          Arrays.asList("upsert", table, columns, conflictColumns),
          () -> {
            requireColumns(columns);
            return inserted(table, columns, dialect.upsertTail(this, columns, conflictColumns));
          });
    }

    /** Builds each statement once per lease: guarded writes of a job repeat the same few. */
    private Guarded cached(List<Object> key, Supplier<Guarded> build) {
      Guarded sql = cache.get(key);
      if (sql == null) {
        sql = build.get();
        if (cache.size() < MAX_CACHED_STATEMENTS) {
          cache.put(key, sql);
        }
      }
      return sql;
    }

    /** An UPDATE or DELETE whose text so far ends in the {@code AND} before the fence check. */
    private Guarded rowChecked(String rowGuarded) {
      String marked = dialect.markedRows(this, true);
      return marked == null
          ? Guarded.checkedPerRow(rowGuarded + fenceHeld)
          : new Guarded(rowGuarded + fenceHeld, rowGuarded + marked);
    }

    private Guarded inserted(String table, List<String> columns, String tail) {
      String marked = dialect.markedRows(this, false);
      String sql = insertSelect(table, columns, fenceHeld) + tail;
      return marked == null
          ? Guarded.checkedPerRow(sql)
          : new Guarded(sql, insertSelect(table, columns, marked) + tail);
    }

    /** {@code INSERT ... SELECT ?, ..., token, resource WHERE fenceCheck}. */
    private String insertSelect(String table, List<String> columns, String fenceCheck) {
      requireColumns(columns);
      return "INSERT INTO "
          + quoteTable(table)
          + dialect.insertTargetAlias()
          + " ("
          + columns.stream().map(dialect::quote).collect(Collectors.joining(", "))
          + ", "
          + dialect.fenceColumn(FenceSchema.TOKEN_COLUMN)
          + ", "
          + dialect.fenceColumn(FenceSchema.RESOURCE_COLUMN)
          + ") SELECT "
          + columns.stream().map(column -> "?").collect(Collectors.joining(", "))
          + ", "
          + token
          + ", "
          + resourceLiteral
          + dialect.selectWithoutTable()
          + " WHERE "
          + fenceCheck;
    }

    private String quoteTable(String table) {
      FenceSchema.requireTableName(table);
      return Arrays.stream(table.split("\\.", -1))
          .map(dialect::quote)
          .collect(Collectors.joining("."));
    }
  }

  private static void requireColumns(List<String> columns) {
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("an insert needs at least one column");
    }
    columns.forEach(column -> FenceSchema.requireIdentifier("column", column));
    for (String fenceColumn : List.of(FenceSchema.TOKEN_COLUMN, FenceSchema.RESOURCE_COLUMN)) {
      if (columns.contains(fenceColumn)) {
        throw new IllegalArgumentException(fenceColumn + " is set by the guard; do not insert it");
      }
    }
  }

  /**
   * PostgreSQL: the fence check also compares the epoch and gives the transaction the lease time as
   * its idle timeout; batched rows inside a transaction check a transaction-local marker that the
   * verify sets under the fence row's lock.
   */
  private static final class Postgres implements Dialect {
    private final String epoch;

    Postgres(String schema) {
      this.epoch = FenceSql.epochFunction(schema);
    }

    @Override
    public String quote(String identifier) {
      return "\"" + identifier + "\"";
    }

    @Override
    public String fenceColumn(String column) {
      return column;
    }

    @Override
    public String fenceTable(String schema) {
      return FenceSchema.fenceTable(schema);
    }

    @Override
    public String currentEpoch(String alias) {
      return " AND " + alias + ".epoch = " + epoch;
    }

    @Override
    public String idleBound(String idleTimeout) {
      // the transaction that locks the fence row gets the lease time as its idle timeout
      return " AND set_config('idle_in_transaction_session_timeout', "
          + idleTimeout
          + ", true) IS NOT NULL";
    }

    @Override
    public String shareLock(String alias) {
      return " FOR SHARE OF " + alias;
    }

    @Override
    public String insertTargetAlias() {
      return " AS fenced_target";
    }

    @Override
    public String selectWithoutTable() {
      return "";
    }

    @Override
    public String leaseIdOnCurrentEpoch() {
      return FenceSql.leaseIdOnEpoch(epoch);
    }

    @Override
    public String upsertTail(Bound bound, List<String> columns, List<String> conflictColumns) {
      String updates =
          columns.stream()
              .filter(column -> !conflictColumns.contains(column))
              .map(column -> quote(column) + " = EXCLUDED." + quote(column))
              .collect(Collectors.joining(", "));
      return " ON CONFLICT ("
          + conflictColumns.stream().map(this::quote).collect(Collectors.joining(", "))
          + ") DO UPDATE SET "
          + (updates.isEmpty() ? "" : updates + ", ")
          + "fence_token = EXCLUDED.fence_token, fence_resource = EXCLUDED.fence_resource"
          + " WHERE fenced_target.fence_token <= EXCLUDED.fence_token"
          + " OR fenced_target.fence_resource <> EXCLUDED.fence_resource";
    }

    /**
     * For an UPDATE or DELETE the marker check sits in the row filter: {@code ctid IS NULL} is
     * never true, but it ties the check to the row, where a predicate without a column would become
     * a one-time filter, an extra plan node per execution (about a tenth of a batch row's time,
     * measured).
     */
    @Override
    public String markedRows(Bound bound, boolean tableRow) {
      String marked =
          "pg_catalog.current_setting('" + GUARD_VERIFIED + "', true) = '" + bound.marker() + "'";
      return tableRow ? "(ctid IS NULL OR " + marked + ")" : marked;
    }

    /**
     * Locks first (the materialized CTE), then compares the locked, rechecked row: the marker is
     * set only while this transaction holds the fence row that names this registration.
     */
    @Override
    public String verify(Bound bound) {
      return "WITH locked AS MATERIALIZED (SELECT f.token, f.lease_id, f.epoch FROM "
          + bound.fenceTable()
          + " f WHERE f.resource = "
          + bound.resourceLiteral()
          + " FOR SHARE OF f) SELECT pg_catalog.set_config('"
          + GUARD_VERIFIED
          + "', '"
          + bound.marker()
          + "', true), set_config('idle_in_transaction_session_timeout', "
          + bound.idleLiteral()
          + ", true) FROM locked f WHERE true"
          + bound.registration("f");
    }

    /**
     * Literals only (the resource and lease id were validated): a statement prefixed with these
     * settings keeps the caller's parameter indexes.
     */
    @Override
    public String triggerSettings(Bound bound) {
      return "SELECT pg_catalog.set_config('"
          + FenceSchema.SETTING_RESOURCE
          + "', "
          + bound.resourceLiteral()
          + ", true), pg_catalog.set_config('"
          + FenceSchema.SETTING_TOKEN
          + "', '"
          + bound.token()
          + "', true), pg_catalog.set_config('"
          + FenceSchema.SETTING_LEASE_ID
          + "', "
          + bound.leaseIdLiteral()
          + ", true), pg_catalog.set_config('idle_in_transaction_session_timeout', "
          + bound.idleLiteral()
          + ", true)";
    }

    @Override
    public SqlLexer.Dialect lexer() {
      return SqlLexer.Dialect.POSTGRES;
    }
  }

  /**
   * MariaDB (InnoDB): backticks; {@code LOCK IN SHARE MODE} in the fence check's subquery (a plain
   * subquery read is not a locking read under READ COMMITTED); no epoch and no transaction-local
   * settings, so batched rows carry the full fence check and there is no trigger mode; the upsert
   * is {@code ON DUPLICATE KEY UPDATE} with the row guard raising ZF001.
   */
  private static final class MariaDb implements Dialect {
    private final String schema;

    MariaDb(String schema) {
      this.schema = FenceSchema.requireIdentifier("fence schema", schema);
    }

    @Override
    public String quote(String identifier) {
      return MariaDbDialect.quote(identifier);
    }

    @Override
    public String fenceColumn(String column) {
      return quote(column);
    }

    @Override
    public String fenceTable(String schema) {
      return quote(schema) + "." + quote(FenceSchema.FENCE_TABLE);
    }

    @Override
    public String currentEpoch(String alias) {
      return "";
    }

    @Override
    public String idleBound(String idleTimeout) {
      return "";
    }

    @Override
    public String shareLock(String alias) {
      return " LOCK IN SHARE MODE";
    }

    @Override
    public String insertTargetAlias() {
      return "";
    }

    @Override
    public String selectWithoutTable() {
      return " FROM DUAL";
    }

    @Override
    public String leaseIdOnCurrentEpoch() {
      return "lease_id";
    }

    /**
     * {@code ON DUPLICATE KEY UPDATE}: the first assignment checks the row guard on the stored row
     * and, if a newer holder wrote it, raises ZF001 through the fence schema's {@code
     * fence_refused} function (an error, not "0 rows": with the driver's default found-rows count a
     * refused duplicate would report 1, like an insert). The others follow unconditionally, {@code
     * fence_resource} last. Fires on any unique key of the table, as MariaDB's upsert does.
     */
    @Override
    public String upsertTail(Bound bound, List<String> columns, List<String> conflictColumns) {
      String tokenColumn = quote(FenceSchema.TOKEN_COLUMN);
      StringBuilder sql = new StringBuilder(" ON DUPLICATE KEY UPDATE ");
      sql.append(tokenColumn)
          .append(" = IF(")
          .append(bound.rowGuard())
          .append(", ")
          .append(bound.token())
          .append(", ")
          .append(quote(schema))
          .append(".fence_refused(")
          .append(bound.resourceLiteral())
          .append(", ")
          .append(bound.token())
          .append(", ")
          .append(tokenColumn)
          .append("))");
      for (String column : columns) {
        if (!conflictColumns.contains(column)) {
          sql.append(", ")
              .append(quote(column))
              .append(" = VALUES(")
              .append(quote(column))
              .append(")");
        }
      }
      sql.append(", ")
          .append(quote(FenceSchema.RESOURCE_COLUMN))
          .append(" = ")
          .append(bound.resourceLiteral());
      return sql.toString();
    }

    /** Batched rows carry the full fence check too: there is no transaction-local marker. */
    @Override
    public String markedRows(Bound bound, boolean tableRow) {
      return null;
    }

    @Override
    public String verify(Bound bound) {
      return "SELECT 1 FROM "
          + bound.fenceTable()
          + " f WHERE f.resource = "
          + bound.resourceLiteral()
          + bound.registration("f")
          + shareLock("f");
    }

    @Override
    public String triggerSettings(Bound bound) {
      return null;
    }

    @Override
    public SqlLexer.Dialect lexer() {
      return SqlLexer.Dialect.MARIADB;
    }
  }
}
