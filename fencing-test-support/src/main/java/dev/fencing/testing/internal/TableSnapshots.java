package dev.fencing.testing.internal;

import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Every row of every base table of some schemas, read from the database, and what changed between
 * two such readings. Tables are told apart by whether they are fenced (a {@code fence_token}
 * column) and, on PostgreSQL, whether the enforcement trigger is installed on them.
 */
public final class TableSnapshots {

  private static final String ENFORCE_TRIGGER = "fencing_enforce";

  /** The database product, for quoting and catalog queries. */
  public enum Dialect {
    /** PostgreSQL. */
    POSTGRES,
    /** MariaDB (or MySQL). */
    MARIADB;

    static Dialect of(Connection connection) throws SQLException {
      String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
      if (product.contains("postgres")) {
        return POSTGRES;
      }
      if (product.contains("mariadb") || product.contains("mysql")) {
        return MARIADB;
      }
      throw new IllegalStateException(
          "the stale-writer probe knows PostgreSQL and MariaDB, not " + product);
    }

    String quote(String identifier) {
      return this == POSTGRES
          ? "\"" + identifier.replace("\"", "\"\"") + "\""
          : "`" + identifier.replace("`", "``") + "`";
    }
  }

  /**
   * One table.
   *
   * @param schema its schema (MariaDB: database)
   * @param name its name
   * @param columns its columns, in order
   * @param key the columns of its primary key; empty if it has none
   * @param fenced whether it has a {@code fence_token} column
   * @param enforcement the mode of the enforcement trigger installed on it ({@code strict} or
   *     {@code lenient}), or null if it has none
   */
  public record Table(
      String schema,
      String name,
      List<String> columns,
      List<String> key,
      boolean fenced,
      String enforcement) {

    /** Returns whether the enforcement trigger is installed on it. */
    public boolean enforced() {
      return enforcement != null;
    }

    /** Returns {@code schema.name}. */
    public String qualified() {
      return schema + "." + name;
    }
  }

  /**
   * What changed in one table: rows by key, before and after ({@code null} when absent).
   *
   * @param table the table
   * @param changes the changed rows, by key, at most the cap given to {@link #diff}
   * @param total how many rows changed in all
   */
  public record TableChange(Table table, List<RowChange> changes, int total) {}

  /**
   * One changed row.
   *
   * @param key the primary key values (or the whole row, for a table without one)
   * @param before the row before, or null if inserted
   * @param after the row after, or null if deleted
   */
  public record RowChange(String key, Map<String, String> before, Map<String, String> after) {

    /** Describes the change in one line. */
    public String describe() {
      if (before == null) {
        return key + ": inserted " + after;
      }
      if (after == null) {
        return key + ": deleted " + before;
      }
      List<String> changed = new ArrayList<>();
      for (Map.Entry<String, String> column : after.entrySet()) {
        String old = before.get(column.getKey());
        if (!Objects.equals(old, column.getValue())) {
          changed.add(column.getKey() + " " + old + " -> " + column.getValue());
        }
      }
      return key + ": " + String.join(", ", changed);
    }
  }

  /** The rows of the tables, by table. */
  private final Map<Table, Map<String, Map<String, String>>> rows;

  private TableSnapshots(Map<Table, Map<String, Map<String, String>>> rows) {
    this.rows = rows;
  }

  /**
   * Lists the base tables of {@code schemas}, leaving out the fence table of {@code fenceSchema}.
   *
   * @param connection a connection to the database
   * @param schemas the schemas (MariaDB: databases); empty for the connection's current one
   * @param fenceSchema the fence's schema
   * @return the tables, sorted
   * @throws SQLException if the catalog could not be read
   */
  public static List<Table> tables(Connection connection, List<String> schemas, String fenceSchema)
      throws SQLException {
    Dialect dialect = Dialect.of(connection);
    List<String> where = schemas.isEmpty() ? List.of(currentSchema(connection, dialect)) : schemas;
    List<Table> tables = new ArrayList<>();
    for (String schema : where) {
      for (String name : tableNames(connection, schema)) {
        if (schema.equalsIgnoreCase(fenceSchema)
            && name.equalsIgnoreCase(FenceSchema.FENCE_TABLE)) {
          continue;
        }
        List<String> columns = columns(connection, schema, name);
        boolean fenced = columns.stream().anyMatch(FenceSchema.TOKEN_COLUMN::equalsIgnoreCase);
        tables.add(
            new Table(
                schema,
                name,
                columns,
                primaryKey(connection, schema, name),
                fenced,
                dialect == Dialect.POSTGRES ? enforcement(connection, schema, name) : null));
      }
    }
    return List.copyOf(tables);
  }

  /**
   * Reads every row of {@code tables}.
   *
   * @param connection a connection to the database, outside any fencing scope
   * @param tables the tables
   * @param maxRows the most rows of one table read; a larger table fails the reading
   * @return the snapshot
   * @throws SQLException if a table could not be read
   * @throws IllegalStateException if a table has more than {@code maxRows} rows
   */
  public static TableSnapshots take(Connection connection, List<Table> tables, int maxRows)
      throws SQLException {
    Dialect dialect = Dialect.of(connection);
    Map<Table, Map<String, Map<String, String>>> all = new LinkedHashMap<>();
    for (Table table : tables) {
      all.put(table, read(connection, dialect, table, maxRows));
    }
    return new TableSnapshots(all);
  }

  /** Returns the total number of rows read. */
  public int rowCount() {
    return rows.values().stream().mapToInt(Map::size).sum();
  }

  /**
   * Returns what changed from {@code before} to this snapshot, table by table.
   *
   * @param before the earlier snapshot of the same tables
   * @param maxRowsPerTable the most changed rows described per table
   * @return the changed tables, in table order
   */
  public List<TableChange> diff(TableSnapshots before, int maxRowsPerTable) {
    List<TableChange> changed = new ArrayList<>();
    for (Map.Entry<Table, Map<String, Map<String, String>>> entry : rows.entrySet()) {
      Map<String, Map<String, String>> old = before.rows.getOrDefault(entry.getKey(), Map.of());
      Map<String, Map<String, String>> now = entry.getValue();
      Set<String> keys = new TreeSet<>(old.keySet());
      keys.addAll(now.keySet());
      List<RowChange> changes = new ArrayList<>();
      int total = 0;
      for (String key : keys) {
        Map<String, String> a = old.get(key);
        Map<String, String> b = now.get(key);
        if (!Objects.equals(a, b)) {
          total++;
          if (changes.size() < maxRowsPerTable) {
            changes.add(new RowChange(key, a, b));
          }
        }
      }
      if (total > 0) {
        changed.add(new TableChange(entry.getKey(), List.copyOf(changes), total));
      }
    }
    return changed;
  }

  private static Map<String, Map<String, String>> read(
      Connection connection, Dialect dialect, Table table, int maxRows) throws SQLException {
    Map<String, Map<String, String>> out = new TreeMap<>();
    Map<String, Integer> duplicates = new HashMap<>();
    String sql =
        "SELECT * FROM " + dialect.quote(table.schema()) + "." + dialect.quote(table.name());
    try (Statement s = connection.createStatement()) {
      s.setMaxRows(maxRows + 1);
      try (ResultSet rs = s.executeQuery(sql)) {
        ResultSetMetaData meta = rs.getMetaData();
        while (rs.next()) {
          if (out.size() == maxRows) {
            throw new IllegalStateException(
                "table "
                    + table.qualified()
                    + " has more than "
                    + maxRows
                    + " rows; the stale-writer probe reads every row before and after: probe a"
                    + " smaller data set, raise the limit (withMaxRowsPerTable) or leave the table"
                    + " out (withSchemas)");
          }
          Map<String, String> row = new LinkedHashMap<>();
          for (int i = 1; i <= meta.getColumnCount(); i++) {
            row.put(meta.getColumnLabel(i).toLowerCase(Locale.ROOT), rs.getString(i));
          }
          String key;
          if (table.key().isEmpty()) {
            String whole = row.toString();
            key = whole + " #" + duplicates.merge(whole, 1, Integer::sum);
          } else {
            List<String> parts = new ArrayList<>();
            for (String column : table.key()) {
              parts.add(column + "=" + row.get(column.toLowerCase(Locale.ROOT)));
            }
            key = String.join(", ", parts);
          }
          out.put(key, row);
        }
      }
    }
    return out;
  }

  private static String currentSchema(Connection connection, Dialect dialect) throws SQLException {
    try (Statement s = connection.createStatement();
        ResultSet rs =
            s.executeQuery(
                dialect == Dialect.POSTGRES ? "SELECT current_schema()" : "SELECT database()")) {
      if (!rs.next() || rs.getString(1) == null) {
        throw new IllegalStateException(
            "the connection has no current schema: name the schemas to probe (withSchemas)");
      }
      return rs.getString(1);
    }
  }

  private static List<String> tableNames(Connection connection, String schema) throws SQLException {
    return strings(
        connection,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type ="
            + " 'BASE TABLE' ORDER BY table_name",
        schema);
  }

  private static List<String> columns(Connection connection, String schema, String table)
      throws SQLException {
    return strings(
        connection,
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name"
            + " = ? ORDER BY ordinal_position",
        schema,
        table);
  }

  private static List<String> primaryKey(Connection connection, String schema, String table)
      throws SQLException {
    return strings(
        connection,
        "SELECT k.column_name FROM information_schema.table_constraints c JOIN"
            + " information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND"
            + " k.table_schema = c.table_schema AND k.table_name = c.table_name WHERE"
            + " c.constraint_type = 'PRIMARY KEY' AND c.table_schema = ? AND c.table_name = ?"
            + " ORDER BY k.ordinal_position",
        schema,
        table);
  }

  private static String enforcement(Connection connection, String schema, String table)
      throws SQLException {
    List<String> definitions =
        strings(
            connection,
            "SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid ="
                + " t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ?"
                + " AND c.relname = ? AND t.tgname = '"
                + ENFORCE_TRIGGER
                + "' AND t.tgenabled <> 'D'",
            schema,
            table);
    if (definitions.isEmpty()) {
      return null;
    }
    return definitions.get(0).contains("'lenient'") ? "lenient" : "strict";
  }

  private static List<String> strings(Connection connection, String sql, String... args)
      throws SQLException {
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        s.setString(i + 1, args[i]);
      }
      List<String> out = new ArrayList<>();
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    }
  }
}
