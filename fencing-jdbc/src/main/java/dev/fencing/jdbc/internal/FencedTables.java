package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The tables that have a {@code fence_token} column, read once from the catalog of one connection.
 * Unqualified names resolve like PostgreSQL resolves them on that connection: through its {@code
 * search_path} (a fenced table hidden by an unfenced one of the same name earlier in the path is
 * not what an unqualified name means). A snapshot: tables fenced later are not seen until read
 * again.
 */
public final class FencedTables {

  private static final String CATALOG =
      "SELECT n.nspname, c.relname, pg_catalog.pg_table_is_visible(c.oid),"
          + " bool_or(a.attname = 'fence_resource'),"
          + " EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.oid"
          + " AND t.tgname = 'fencing_enforce' AND t.tgenabled <> 'D')"
          + " FROM pg_catalog.pg_class c"
          + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
          + " JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid"
          + " AND a.attnum > 0 AND NOT a.attisdropped"
          + " WHERE c.relkind IN ('r', 'p', 'v', 'f')"
          + " AND a.attname IN ('fence_token', 'fence_resource')"
          + " GROUP BY n.nspname, c.relname, c.oid"
          + " HAVING bool_or(a.attname = 'fence_token')";

  /**
   * One fenced table.
   *
   * @param schema its schema, as stored in the catalog
   * @param name its name, as stored in the catalog
   * @param hasResourceColumn whether it also has the {@code fence_resource} column, so that rows
   *     are compared only with tokens of their own resource
   * @param hasEnforcementTrigger whether it has the enabled {@code fencing_enforce} trigger
   *     installed by the {@code migrations} module
   */
  public record Table(
      String schema, String name, boolean hasResourceColumn, boolean hasEnforcementTrigger) {
    /** Validates the names. */
    public Table {
      Objects.requireNonNull(schema, "schema");
      Objects.requireNonNull(name, "name");
    }

    @Override
    public String toString() {
      return schema + "." + name;
    }
  }

  private final Map<String, Table> byQualifiedName;
  private final Map<String, Table> visibleByName;
  private final Set<String> lowerCaseNames;
  private final boolean standardStrings;

  private FencedTables(
      Map<String, Table> byQualifiedName,
      Map<String, Table> visibleByName,
      boolean standardStrings) {
    this.byQualifiedName = Map.copyOf(byQualifiedName);
    this.visibleByName = Map.copyOf(visibleByName);
    Set<String> names = new HashSet<>();
    byQualifiedName.values().forEach(t -> names.add(t.name().toLowerCase(Locale.ROOT)));
    this.lowerCaseNames = Set.copyOf(names);
    this.standardStrings = standardStrings;
  }

  /**
   * Reads the fenced tables visible to {@code connection}, with its current {@code search_path}.
   *
   * @param connection an open connection, left open; inside a transaction the two reads are part of
   *     it
   * @return the snapshot
   * @throws SQLException if the catalog could not be read
   */
  public static FencedTables read(Connection connection) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Map<String, Table> qualified = new HashMap<>();
    Map<String, Table> visible = new HashMap<>();
    boolean standardStrings;
    try (Statement statement = connection.createStatement()) {
      try (ResultSet rows = statement.executeQuery(CATALOG)) {
        while (rows.next()) {
          Table table =
              new Table(
                  rows.getString(1), rows.getString(2), rows.getBoolean(4), rows.getBoolean(5));
          qualified.put(key(table.schema(), table.name()), table);
          if (rows.getBoolean(3)) {
            visible.put(table.name(), table);
          }
        }
      }
      try (ResultSet row = statement.executeQuery("SHOW standard_conforming_strings")) {
        standardStrings = row.next() && "on".equalsIgnoreCase(row.getString(1));
      }
    }
    return new FencedTables(qualified, visible, standardStrings);
  }

  /**
   * The fenced table that a name means, if any.
   *
   * @param schema the schema as PostgreSQL sees it (unquoted names already folded to lower case),
   *     or null for an unqualified name
   * @param name the table name as PostgreSQL sees it
   */
  public Optional<Table> resolve(String schema, String name) {
    return Optional.ofNullable(
        schema == null ? visibleByName.get(name) : byQualifiedName.get(key(schema, name)));
  }

  /** Whether any fenced table, in any schema, has this name, compared without case. */
  public boolean anyNamedLike(String name) {
    return lowerCaseNames.contains(name.toLowerCase(Locale.ROOT));
  }

  /** Whether the name of some fenced table occurs in {@code text}, compared without case. */
  public boolean anyNameContainedIn(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    for (String name : lowerCaseNames) {
      if (lower.contains(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The fenced tables without the enforcement trigger: in trigger mode, the only ones a plain write
   * could reach unchecked.
   */
  public FencedTables withoutEnforcementTrigger() {
    return filtered(table -> !table.hasEnforcementTrigger());
  }

  /**
   * The fenced tables of one schema only: for tests that share a database with other fenced schemas
   * and must not see them.
   */
  FencedTables onlyInSchema(String... schemas) {
    Set<String> kept = Set.of(schemas);
    return filtered(table -> kept.contains(table.schema()));
  }

  private FencedTables filtered(Predicate<Table> keep) {
    Map<String, Table> qualified = new HashMap<>();
    Map<String, Table> visible = new HashMap<>();
    byQualifiedName.forEach(
        (key, table) -> {
          if (keep.test(table)) {
            qualified.put(key, table);
          }
        });
    visibleByName.forEach(
        (key, table) -> {
          if (keep.test(table)) {
            visible.put(key, table);
          }
        });
    return new FencedTables(qualified, visible, standardStrings);
  }

  /** Whether there is no fenced table at all. */
  public boolean isEmpty() {
    return byQualifiedName.isEmpty();
  }

  /**
   * Whether the connection had {@code standard_conforming_strings} on: string literals are then
   * read by PostgreSQL as the parser reads them (a backslash is an ordinary character).
   */
  public boolean standardConformingStrings() {
    return standardStrings;
  }

  private static String key(String schema, String name) {
    return schema + '\u0000' + name;
  }

  @Override
  public String toString() {
    return "FencedTables" + byQualifiedName.values();
  }
}
