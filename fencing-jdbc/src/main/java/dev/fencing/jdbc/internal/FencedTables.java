package dev.fencing.jdbc.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The tables that have a {@code fence_token} column, and what else writes their rows, read from the
 * catalog of one connection: which relations write into them through a cascading foreign key, a
 * rule or view, or inheritance, and which are emptied by a {@code TRUNCATE ... CASCADE} of another
 * table. A snapshot: tables fenced later are not seen until read again.
 *
 * <p>Names resolve conservatively: an unqualified name means every fenced table of that name in any
 * schema (any session may have any {@code search_path}, temporary tables included), never only the
 * one the reading session happened to see. A table counts as having the enforcement trigger only if
 * it and every table that inherits from it (partitions included) have it enabled.
 */
public final class FencedTables {

  private static final String TABLES =
      "SELECT c.oid, n.nspname, c.relname, bool_or(a.attname = 'fence_resource'),"
          + " EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.oid"
          + " AND t.tgname = 'fencing_enforce' AND t.tgenabled IN ('O', 'A'))"
          + " FROM pg_catalog.pg_class c"
          + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
          + " JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid"
          + " AND a.attnum > 0 AND NOT a.attisdropped"
          + " WHERE c.relkind IN ('r', 'p', 'v', 'f')"
          + " AND a.attname IN ('fence_token', 'fence_resource')"
          + " GROUP BY n.nspname, c.relname, c.oid"
          + " HAVING bool_or(a.attname = 'fence_token')";

  /**
   * What writes rows of another relation: foreign keys ({@code w} when a delete or key update of
   * the referenced row writes the referencing rows, {@code t} when only {@code TRUNCATE ...
   * CASCADE} does), inheritance ({@code i}), and rules, views included ({@code r}).
   */
  private static final String EDGES =
      "SELECT e.kind, e.parent, pn.nspname, p.relname, e.child, cn.nspname, ch.relname FROM ("
          + "SELECT CASE WHEN k.confdeltype IN ('c', 'n', 'd') OR k.confupdtype IN ('c', 'n', 'd')"
          + " THEN 'w' ELSE 't' END AS kind, k.confrelid AS parent, k.conrelid AS child"
          + " FROM pg_catalog.pg_constraint k WHERE k.contype = 'f'"
          + " UNION SELECT 'i', i.inhparent, i.inhrelid FROM pg_catalog.pg_inherits i"
          + " UNION SELECT 'r', r.ev_class, d.refobjid FROM pg_catalog.pg_rewrite r"
          + " JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
          + " AND d.objid = r.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass"
          + " WHERE d.refobjid <> r.ev_class) e"
          + " JOIN pg_catalog.pg_class p ON p.oid = e.parent"
          + " JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace"
          + " JOIN pg_catalog.pg_class ch ON ch.oid = e.child"
          + " JOIN pg_catalog.pg_namespace cn ON cn.oid = ch.relnamespace"
          + " WHERE pn.nspname NOT IN ('pg_catalog', 'information_schema')";

  /**
   * One fenced table.
   *
   * @param schema its schema, as stored in the catalog
   * @param name its name, as stored in the catalog
   * @param hasResourceColumn whether it also has the {@code fence_resource} column, so that rows
   *     are compared only with tokens of their own resource
   * @param hasEnforcementTrigger whether it and every table that inherits from it have the enabled
   *     {@code fencing_enforce} trigger installed by the {@code migrations} module
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

  /** A relation by its stored names. */
  record Relation(String schema, String name) {
    @Override
    public String toString() {
      return schema + "." + name;
    }
  }

  /** How writing one relation writes another. */
  enum Through {
    /** A foreign key whose delete or key update action writes the referencing rows. */
    CASCADE,
    /** A foreign key with no such action: only {@code TRUNCATE ... CASCADE} reaches it. */
    KEY,
    /** Inheritance: the parent's UPDATE, DELETE and TRUNCATE reach the inheriting rows. */
    INHERITANCE,
    /** A rule (a view's included): any write of the relation may write the other. */
    RULE
  }

  /** Writing {@code from} may write {@code to}. */
  record Edge(Relation from, Relation to, Through through) {}

  /** The kinds of statement whose side effects differ. */
  public enum Write {
    /** INSERT without an update on conflict: only rules write elsewhere. */
    INSERT,
    /** UPDATE, DELETE, MERGE, an upsert: cascades, inheritance and rules. */
    UPDATE_OR_DELETE,
    /** TRUNCATE: every table referencing it (CASCADE), inheritance. */
    TRUNCATE;

    boolean follows(Through through) {
      return switch (this) {
        case INSERT -> through == Through.RULE;
        case UPDATE_OR_DELETE -> through != Through.KEY;
        case TRUNCATE -> through != Through.RULE;
      };
    }
  }

  private final Map<Relation, Table> tables;
  private final List<Edge> edges;

  private FencedTables(Map<Relation, Table> tables, List<Edge> edges) {
    this.tables = Map.copyOf(tables);
    this.edges = List.copyOf(edges);
  }

  /** A model from tables and edges read elsewhere (MariaDB's catalog). */
  static FencedTables of(Map<Relation, Table> tables, List<Edge> edges) {
    return new FencedTables(tables, edges);
  }

  /**
   * Reads the fenced tables and what writes into them.
   *
   * @param connection an open connection, left open; inside a transaction the reads are part of it
   * @return the snapshot
   * @throws SQLException if the catalog could not be read
   */
  public static FencedTables read(Connection connection) throws SQLException {
    Objects.requireNonNull(connection, "connection");
    Map<Long, Table> byOid = new HashMap<>();
    List<Edge> edges = new ArrayList<>();
    Map<Long, List<Long>> heirs = new HashMap<>();
    try (Statement statement = connection.createStatement()) {
      try (ResultSet rows = statement.executeQuery(TABLES)) {
        while (rows.next()) {
          byOid.put(
              rows.getLong(1),
              new Table(
                  rows.getString(2), rows.getString(3), rows.getBoolean(4), rows.getBoolean(5)));
        }
      }
      try (ResultSet rows = statement.executeQuery(EDGES)) {
        while (rows.next()) {
          Through through =
              switch (rows.getString(1)) {
                case "w" -> Through.CASCADE;
                case "t" -> Through.KEY;
                case "i" -> Through.INHERITANCE;
                default -> Through.RULE;
              };
          edges.add(
              new Edge(
                  new Relation(rows.getString(3), rows.getString(4)),
                  new Relation(rows.getString(6), rows.getString(7)),
                  through));
          if (through == Through.INHERITANCE) {
            heirs.computeIfAbsent(rows.getLong(2), oid -> new ArrayList<>()).add(rows.getLong(5));
          }
        }
      }
    }
    Map<Relation, Table> tables = new LinkedHashMap<>();
    byOid.forEach(
        (oid, table) -> {
          boolean covered = table.hasEnforcementTrigger() && heirsCovered(oid, byOid, heirs);
          tables.put(
              new Relation(table.schema(), table.name()),
              new Table(table.schema(), table.name(), table.hasResourceColumn(), covered));
        });
    return new FencedTables(tables, edges);
  }

  /**
   * Whether every table inheriting from {@code oid}, at any depth, is fenced and has the trigger.
   */
  private static boolean heirsCovered(
      long oid, Map<Long, Table> byOid, Map<Long, List<Long>> heirs) {
    Deque<Long> todo = new ArrayDeque<>(heirs.getOrDefault(oid, List.of()));
    Set<Long> seen = new HashSet<>();
    while (!todo.isEmpty()) {
      long heir = todo.pop();
      if (!seen.add(heir)) {
        continue;
      }
      Table table = byOid.get(heir);
      if (table == null || !table.hasEnforcementTrigger()) {
        return false;
      }
      todo.addAll(heirs.getOrDefault(heir, List.of()));
    }
    return true;
  }

  /**
   * The fenced table that a name may mean, if any.
   *
   * @param schema the schema as the server sees it (unquoted names already folded), or null for an
   *     unqualified name: then every fenced table of that name, in any schema, counts, and the
   *     result has the resource column if any of them has, and the trigger only if all of them have
   * @param name the table name as the server sees it
   */
  public Optional<Table> resolve(String schema, String name) {
    if (schema != null) {
      return Optional.ofNullable(tables.get(new Relation(schema, name)));
    }
    List<Table> candidates = new ArrayList<>();
    for (Table table : tables.values()) {
      if (table.name().equals(name)) {
        candidates.add(table);
      }
    }
    if (candidates.size() <= 1) {
      return candidates.stream().findFirst();
    }
    boolean resource = candidates.stream().anyMatch(Table::hasResourceColumn);
    boolean trigger = candidates.stream().allMatch(Table::hasEnforcementTrigger);
    return Optional.of(new Table("(any schema)", name, resource, trigger));
  }

  /**
   * Every relation from which a write of {@code write}'s kind reaches a fenced table of {@code
   * targets} (other than itself), with one table it reaches.
   */
  Map<Relation, Table> reaching(Write write, Predicate<Table> targets) {
    Map<Relation, List<Edge>> into = new HashMap<>();
    for (Edge edge : edges) {
      if (write.follows(edge.through())) {
        into.computeIfAbsent(edge.to(), to -> new ArrayList<>()).add(edge);
      }
    }
    Map<Relation, Table> reached = new HashMap<>();
    Deque<Relation> todo = new ArrayDeque<>();
    Map<Relation, Table> origin = new HashMap<>();
    tables.forEach(
        (relation, table) -> {
          if (targets.test(table)) {
            todo.add(relation);
            origin.put(relation, table);
          }
        });
    while (!todo.isEmpty()) {
      Relation next = todo.pop();
      Table target = origin.get(next);
      for (Edge edge : into.getOrDefault(next, List.of())) {
        if (!origin.containsKey(edge.from())) {
          origin.put(edge.from(), target);
          reached.put(edge.from(), target);
          todo.add(edge.from());
        }
      }
    }
    return reached;
  }

  /** The fenced tables that {@code targets} accepts, by stored names. */
  Map<Relation, Table> tables(Predicate<Table> targets) {
    Map<Relation, Table> kept = new HashMap<>();
    tables.forEach(
        (relation, table) -> {
          if (targets.test(table)) {
            kept.put(relation, table);
          }
        });
    return kept;
  }

  /**
   * The fenced tables without the enforcement trigger: in trigger mode, the only ones a plain write
   * could reach unchecked.
   */
  public FencedTables withoutEnforcementTrigger() {
    return filtered(table -> !table.hasEnforcementTrigger());
  }

  /**
   * The fenced tables of some schemas only: for tests that share a database with other fenced
   * schemas and must not see them.
   */
  FencedTables onlyInSchema(String... schemas) {
    Set<String> kept = Set.of(schemas);
    return filtered(table -> kept.contains(table.schema()));
  }

  private FencedTables filtered(Predicate<Table> keep) {
    return new FencedTables(tables(keep), edges);
  }

  /** Whether there is no fenced table at all. */
  public boolean isEmpty() {
    return tables.isEmpty();
  }

  @Override
  public String toString() {
    return "FencedTables" + tables.values();
  }
}
