package dev.fencing.jdbc.internal;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The SQL of the two guards. The writer's registration reaches the statements through the session
 * settings {@code fencing.resource}, {@code fencing.token} and {@code fencing.lease_id}, which
 * {@code FencedDataSource} keeps in step with the scope's lease, so guarded statements bind no
 * extra parameters and the caller's parameter indexes stay as written.
 */
public final class FenceSql {

  /** The writer's token, as an SQL expression. */
  public static final String TOKEN = "current_setting('fencing.token')::bigint";

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private final String fenceTable;
  private final String fenceHeld;

  /** Creates the SQL for a fence in {@code schema} (validated by the caller). */
  public FenceSql(String schema) {
    this.fenceTable = quote(schema) + ".fence";
    this.fenceHeld =
        "(coalesce(current_setting('fencing.guard_verified', true) = "
            + "(current_setting('fencing.resource') || '/' || current_setting('fencing.token')"
            + " || '/' || current_setting('fencing.lease_id')), false)"
            + " OR EXISTS (SELECT 1 FROM "
            + fenceTable
            + " f WHERE f.resource = current_setting('fencing.resource')"
            + " AND f.token = "
            + TOKEN
            + " AND f.lease_id = current_setting('fencing.lease_id') FOR SHARE OF f))";
  }

  /**
   * The resource fence as a predicate: true only while the fence names the writer's registration,
   * locking the fence row {@code FOR SHARE} until commit. Evaluated once per statement.
   */
  public String fenceHeld() {
    return fenceHeld;
  }

  /** Locks the fence row for the rest of the transaction if it names the writer; one row if so. */
  public String verifyForTransaction() {
    return "SELECT set_config('fencing.guard_verified', f.resource || '/' || f.token || '/' ||"
        + " f.lease_id, true) FROM "
        + fenceTable
        + " f WHERE f.resource = current_setting('fencing.resource') AND f.token = "
        + TOKEN
        + " AND f.lease_id = current_setting('fencing.lease_id') FOR SHARE OF f";
  }

  /** Reads the registration of a resource: one parameter, the resource. */
  public String readFence() {
    return "SELECT token, lease_id FROM " + fenceTable + " WHERE resource = ?";
  }

  /** Registers a holder: parameters resource, token, lease id; returns a row when registered. */
  public String register() {
    return "INSERT INTO "
        + fenceTable
        + " AS f (resource, token, lease_id) VALUES (?, ?, ?) ON CONFLICT (resource) DO UPDATE"
        + " SET token = EXCLUDED.token, lease_id = EXCLUDED.lease_id, registered_at = now()"
        + " WHERE f.token < EXCLUDED.token RETURNING f.token";
  }

  /** A guarded UPDATE. */
  public String update(String table, String assignments, String condition) {
    requireFragment("assignments", assignments);
    requireFragment("condition", condition);
    return "UPDATE "
        + quoteTable(table)
        + " SET "
        + assignments
        + ", fence_token = "
        + TOKEN
        + " WHERE ("
        + condition
        + ") AND fence_token <= "
        + TOKEN
        + " AND "
        + fenceHeld;
  }

  /** A guarded DELETE. */
  public String delete(String table, String condition) {
    requireFragment("condition", condition);
    return "DELETE FROM "
        + quoteTable(table)
        + " WHERE ("
        + condition
        + ") AND fence_token <= "
        + TOKEN
        + " AND "
        + fenceHeld;
  }

  /** A guarded INSERT of one row, one parameter per column. */
  public String insert(String table, List<String> columns) {
    return insertPrefix(table, columns);
  }

  /**
   * A guarded upsert: inserts, or on conflict updates the other columns only if the stored row was
   * not written by a newer holder.
   */
  public String upsert(String table, List<String> columns, List<String> conflictColumns) {
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
    return insertPrefix(table, columns)
        + " ON CONFLICT ("
        + conflictColumns.stream().map(FenceSql::quote).collect(Collectors.joining(", "))
        + ") DO UPDATE SET "
        + (updates.isEmpty() ? "" : updates + ", ")
        + "fence_token = EXCLUDED.fence_token WHERE fenced_target.fence_token <="
        + " EXCLUDED.fence_token";
  }

  private String insertPrefix(String table, List<String> columns) {
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("an insert needs at least one column");
    }
    columns.forEach(column -> requireIdentifier("column", column));
    if (columns.contains("fence_token")) {
      throw new IllegalArgumentException("fence_token is set by the guard; do not insert it");
    }
    return "INSERT INTO "
        + quoteTable(table)
        + " AS fenced_target ("
        + columns.stream().map(FenceSql::quote).collect(Collectors.joining(", "))
        + ", fence_token) SELECT "
        + columns.stream().map(column -> "?").collect(Collectors.joining(", "))
        + ", "
        + TOKEN
        + " WHERE "
        + fenceHeld;
  }

  /**
   * Validates and quotes {@code table} or {@code schema.table}.
   *
   * @throws IllegalArgumentException if a part is not a plain identifier
   */
  public static String quoteTable(String table) {
    if (table == null) {
      throw new IllegalArgumentException("table name must not be null");
    }
    String[] parts = table.split("\\.", -1);
    if (parts.length > 2) {
      throw new IllegalArgumentException(
          "table name must be table or schema.table, got \"" + table + "\"");
    }
    StringBuilder quoted = new StringBuilder();
    for (String part : parts) {
      requireIdentifier("table name", part);
      if (quoted.length() > 0) {
        quoted.append('.');
      }
      quoted.append(quote(part));
    }
    return quoted.toString();
  }

  /**
   * Throws unless {@code value} is a plain identifier.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static String requireIdentifier(String what, String value) {
    if (value == null || !IDENTIFIER.matcher(value).matches()) {
      throw new IllegalArgumentException(
          what
              + " must be a plain identifier [A-Za-z_][A-Za-z0-9_]* of at most 63 characters, got "
              + (value == null ? "null" : "\"" + value + "\""));
    }
    return value;
  }

  private static String quote(String identifier) {
    return "\"" + identifier + "\"";
  }

  private static void requireFragment(String what, String fragment) {
    if (fragment == null || fragment.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
    if (fragment.contains(";")) {
      throw new IllegalArgumentException(what + " must be one SQL expression, without ';'");
    }
  }
}
