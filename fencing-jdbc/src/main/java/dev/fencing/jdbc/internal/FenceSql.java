package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.internal.ResourceNames;
import dev.fencing.schema.FenceSchema;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The SQL of the fence and of the two guards. Guarded statements carry the writer's registration as
 * literals (see {@link #bind(Lease)}), so they need no session state and no extra parameters: the
 * caller's parameter indexes stay as written.
 */
public final class FenceSql {

  private static final int MAX_CACHED_STATEMENTS = 256;
  private static final String GUARD_VERIFIED = "fencing.guard_verified";
  private static final Pattern LEASE_ID = Pattern.compile("[A-Za-z0-9_-]{1,128}");
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * Checks that a lease id can be written into SQL as a literal.
   *
   * @return {@code leaseId}
   * @throws IllegalArgumentException unless it is 1 to 128 characters from A-Z a-z 0-9 _ -
   */
  static String validLeaseId(String leaseId) {
    if (leaseId == null || !LEASE_ID.matcher(leaseId).matches()) {
      throw new IllegalArgumentException(
          "lease id must be 1 to 128 characters from A-Z a-z 0-9 _ -, got \"" + leaseId + "\"");
    }
    return leaseId;
  }

  private final String fenceTable;
  private final String epoch;

  /** Creates the SQL for a fence in {@code schema} (validated by the caller). */
  public FenceSql(String schema) {
    this.fenceTable = FenceSchema.fenceTable(schema);
    this.epoch = epochFunction(schema);
  }

  /**
   * The call of the fence schema's {@code fence_epoch()}: the server's current epoch (its WAL
   * timeline), which every registration stores and every fence check compares.
   */
  static String epochFunction(String schema) {
    String table = FenceSchema.fenceTable(schema);
    return table.substring(0, table.length() - FenceSchema.FENCE_TABLE.length()) + "fence_epoch()";
  }

  /**
   * The fence's lease id as a column expression that is null for a registration of an older epoch,
   * for reads that classify a refusal.
   */
  public String leaseIdOnCurrentEpoch() {
    return "CASE WHEN epoch = " + epoch + " THEN lease_id END";
  }

  /**
   * Reads the registration of a resource: one parameter, the resource. A registration made on an
   * older epoch (before the server's last promotion) reads with no lease id: it names no holder any
   * more.
   */
  public String readFence() {
    return "SELECT token, "
        + leaseIdOnCurrentEpoch()
        + " FROM "
        + fenceTable
        + " WHERE resource = ?";
  }

  /**
   * Registers a holder on the server's current epoch: parameters resource, token, lease id; returns
   * a row when registered.
   */
  public String register() {
    return "INSERT INTO "
        + fenceTable
        + " AS f (resource, token, lease_id, epoch) VALUES (?, ?, ?, "
        + epoch
        + ") ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, lease_id ="
        + " EXCLUDED.lease_id, epoch = EXCLUDED.epoch, registered_at = now()"
        + " WHERE f.token < EXCLUDED.token RETURNING f.token";
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
   * @param sql the row guard and the fence predicate ({@link Bound#fenceHeld()}): for single
   *     executions and auto-commit batches
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
    private final long token;
    private final String stamp;
    private final String rowGuard;
    private final String fenceHeld;
    private final String markedCheck;
    private final String resourceLiteral;
    private final String verify;
    private final String idleTimeout;
    private final String triggerSettings;

    private Bound(Lease lease) {
      String resource = ResourceNames.validate(lease.resource());
      String leaseId = validLeaseId(lease.leaseId());
      this.token = lease.token().value();
      this.resourceLiteral = "'" + resource + "'";
      this.stamp =
          FenceSchema.TOKEN_COLUMN
              + " = "
              + token
              + ", "
              + FenceSchema.RESOURCE_COLUMN
              + " = "
              + resourceLiteral;
      this.rowGuard =
          "("
              + FenceSchema.TOKEN_COLUMN
              + " <= "
              + token
              + " OR "
              + FenceSchema.RESOURCE_COLUMN
              + " <> "
              + resourceLiteral
              + ")";
      this.idleTimeout = Math.max(1, lease.leaseTime().toMillis()) + "ms";
      // Literals only (the resource and lease id were validated above): a statement prefixed with
      // these settings keeps the caller's parameter indexes.
      this.triggerSettings =
          "SELECT pg_catalog.set_config('"
              + FenceSchema.SETTING_RESOURCE
              + "', "
              + resourceLiteral
              + ", true), pg_catalog.set_config('"
              + FenceSchema.SETTING_TOKEN
              + "', '"
              + token
              + "', true), pg_catalog.set_config('"
              + FenceSchema.SETTING_LEASE_ID
              + "', '"
              + leaseId
              + "', true), pg_catalog.set_config('idle_in_transaction_session_timeout', '"
              + idleTimeout
              + "', true)";
      String boundIdle =
          "set_config('idle_in_transaction_session_timeout', '" + idleTimeout + "', true)";
      String names =
          " AND f.token = " + token + " AND f.lease_id = '" + leaseId + "' AND f.epoch = " + epoch;
      // Drawn per registration, not per transaction or statement: the statements keep one text,
      // so the driver's and the server's prepared statements are reused from batch to batch.
      String marker = newBatchMarker();
      this.markedCheck =
          "pg_catalog.current_setting('" + GUARD_VERIFIED + "', true) = '" + marker + "'";
      this.fenceHeld =
          "EXISTS (SELECT 1 FROM "
              + fenceTable
              + " f WHERE f.resource = "
              + resourceLiteral
              + names
              + " AND "
              + boundIdle
              + " IS NOT NULL FOR SHARE OF f)";
      // Locks first (the materialized CTE), then compares the locked, rechecked row: the marker is
      // set only while this transaction holds the fence row that names this registration.
      this.verify =
          "WITH locked AS MATERIALIZED (SELECT f.token, f.lease_id, f.epoch FROM "
              + fenceTable
              + " f WHERE f.resource = "
              + resourceLiteral
              + " FOR SHARE OF f) SELECT pg_catalog.set_config('"
              + GUARD_VERIFIED
              + "', '"
              + marker
              + "', true), "
              + boundIdle
              + " FROM locked f WHERE true"
              + names;
    }

    /**
     * The resource fence as a predicate: true only while the fence names this registration, locking
     * the fence row {@code FOR SHARE} until commit (and bounding how long the transaction may then
     * sit idle by the lease time). PostgreSQL evaluates it once per statement (an InitPlan).
     */
    public String fenceHeld() {
      return fenceHeld;
    }

    /**
     * Locks the fence row and, if the locked row names this registration, sets this registration's
     * batch marker transaction-locally and returns one row; returns no row otherwise.
     */
    public String verify() {
      return verify;
    }

    /**
     * One statement that gives the enforcement trigger this registration, transaction-local, with
     * the lease time as {@code idle_in_transaction_session_timeout}; no parameters. Put in front of
     * a statement ({@code settings; statement}), it runs in the same round trip and, in auto-commit
     * mode, in the same implicit transaction.
     */
    public String triggerSettings() {
      return triggerSettings;
    }

    /** The lease time as {@code idle_in_transaction_session_timeout}, for transaction-local use. */
    public String idleTimeout() {
      return idleTimeout;
    }

    /** A guarded UPDATE. */
    public Guarded update(String table, String assignments, String condition) {
      SqlLexer.requireFragment("assignments", assignments);
      SqlLexer.requireFragment("condition", condition);
      return cached(
          Arrays.asList("update", table, assignments, condition),
          () -> buildUpdate(table, assignments, condition));
    }

    /** A guarded DELETE. */
    public Guarded delete(String table, String condition) {
      SqlLexer.requireFragment("condition", condition);
      return cached(Arrays.asList("delete", table, condition), () -> buildDelete(table, condition));
    }

    /** A guarded INSERT of one row, one parameter per column. */
    public Guarded insert(String table, List<String> columns) {
      return cached(Arrays.asList("insert", table, columns), () -> buildInsert(table, columns));
    }

    /**
     * A guarded upsert: inserts, or on conflict updates the other columns only if the stored row
     * was not written by a newer holder.
     */
    public Guarded upsert(String table, List<String> columns, List<String> conflictColumns) {
      return cached(
          Arrays.asList("upsert", table, columns, conflictColumns),
          () -> buildUpsert(table, columns, conflictColumns));
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

    private Guarded buildUpdate(String table, String assignments, String condition) {
      String rowGuarded =
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
              + " AND ";
      return rowMarked(rowGuarded);
    }

    private Guarded buildDelete(String table, String condition) {
      String rowGuarded =
          "DELETE FROM "
              + quoteTable(table)
              + " WHERE ("
              + condition
              + ") AND "
              + rowGuard
              + " AND ";
      return rowMarked(rowGuarded);
    }

    /**
     * An UPDATE or DELETE whose batched rows check the marker in the row filter: {@code ctid IS
     * NULL} is never true, but it ties the check to the row, where a predicate without a column
     * would become a one-time filter, an extra plan node per execution (about a tenth of a batch
     * row's time, measured).
     */
    private Guarded rowMarked(String rowGuarded) {
      return new Guarded(
          rowGuarded + fenceHeld, rowGuarded + "(ctid IS NULL OR " + markedCheck + ")");
    }

    private Guarded buildInsert(String table, List<String> columns) {
      return new Guarded(
          insertPrefix(table, columns, fenceHeld), insertPrefix(table, columns, markedCheck));
    }

    private Guarded buildUpsert(String table, List<String> columns, List<String> conflictColumns) {
      if (conflictColumns.isEmpty()) {
        throw new IllegalArgumentException("an upsert needs at least one conflict column");
      }
      for (String column : conflictColumns) {
        if (!columns.contains(column)) {
          throw new IllegalArgumentException(
              "conflict column \"" + column + "\" is not among the inserted columns " + columns);
        }
      }
      String updates =
          columns.stream()
              .filter(column -> !conflictColumns.contains(column))
              .map(column -> quote(column) + " = EXCLUDED." + quote(column))
              .collect(Collectors.joining(", "));
      String onConflict =
          " ON CONFLICT ("
              + conflictColumns.stream().map(FenceSql::quote).collect(Collectors.joining(", "))
              + ") DO UPDATE SET "
              + (updates.isEmpty() ? "" : updates + ", ")
              + "fence_token = EXCLUDED.fence_token, fence_resource = EXCLUDED.fence_resource"
              + " WHERE fenced_target.fence_token <= EXCLUDED.fence_token"
              + " OR fenced_target.fence_resource <> EXCLUDED.fence_resource";
      return new Guarded(
          insertPrefix(table, columns, fenceHeld) + onConflict,
          insertPrefix(table, columns, markedCheck) + onConflict);
    }

    private String insertPrefix(String table, List<String> columns, String fenceCheck) {
      if (columns.isEmpty()) {
        throw new IllegalArgumentException("an insert needs at least one column");
      }
      columns.forEach(column -> requireIdentifier("column", column));
      for (String fenceColumn : List.of(FenceSchema.TOKEN_COLUMN, FenceSchema.RESOURCE_COLUMN)) {
        if (columns.contains(fenceColumn)) {
          throw new IllegalArgumentException(
              fenceColumn + " is set by the guard; do not insert it");
        }
      }
      String values = columns.stream().map(column -> "?").collect(Collectors.joining(", "));
      return "INSERT INTO "
          + quoteTable(table)
          + " AS fenced_target ("
          + columns.stream().map(FenceSql::quote).collect(Collectors.joining(", "))
          + ", fence_token, fence_resource) SELECT "
          + values
          + ", "
          + token
          + ", "
          + resourceLiteral
          + " WHERE "
          + fenceCheck;
    }
  }

  /**
   * Validates and quotes {@code table} or {@code schema.table}.
   *
   * @throws IllegalArgumentException if a part is not a plain identifier
   */
  public static String quoteTable(String table) {
    return FenceSchema.quote(FenceSchema.requireTableName(table));
  }

  /**
   * Throws unless {@code value} is a plain identifier.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static String requireIdentifier(String what, String value) {
    return FenceSchema.requireIdentifier(what, value);
  }

  private static String quote(String identifier) {
    return "\"" + identifier + "\"";
  }
}
