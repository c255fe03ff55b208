package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A property test whose oracle is the database. Statements are generated from a small grammar over
 * a schema with fenced and unfenced tables, a quoted and a 63-byte name, a same-named unfenced
 * table in another schema, temporary tables and search_path changes, a view, inheritance,
 * partitions and a cascading foreign key; with literals of every quoting kind, comments of every
 * kind, and the session settings that change how text is read. Each runs as a <b>stale holder</b>
 * through the JDBC entry points and as {@link GuardedStatements} fragments: a checksum of every
 * fenced table's rows, taken in the database, must not change. On PostgreSQL each statement the
 * library accepts also runs as the <b>current holder</b> and, as written, on an identical unfenced
 * copy: both must change the same rows. A control runs the stale statements with fencing off and
 * must find violations.
 *
 * <p>Seeded and replayable: {@code -Dfencing.fuzz.seed=N -Dfencing.fuzz.statements=M}; a failure
 * reports the seed and the shrunk statement.
 */
class SqlRecognitionFuzzTest {

  private static final long SEED = Long.getLong("fencing.fuzz.seed", 20261201L);
  private static final int STATEMENTS = Integer.getInteger("fencing.fuzz.statements", 250);

  /** One generated case: the choices, each an index into its alternatives. */
  record Case(int kind, int target, int literal, int comment, int setting, int entry, int id) {
    Case with(int field, int value) {
      int[] c = {kind, target, literal, comment, setting, entry, id};
      c[field] = value;
      return new Case(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
    }

    int get(int field) {
      return new int[] {kind, target, literal, comment, setting, entry, id}[field];
    }
  }

  /** What one dialect offers the grammar. */
  interface Grammar {
    int[] sizes();

    String statement(Case c, String schema);

    /** Settings run in the statement's transaction before it, on the same connection. */
    List<String> settings(Case c, String schema);

    String fragmentTable(String schema);

    String assignment(Case c);
  }

  static final class Postgres implements Grammar {
    static final String LONG = "f_" + "l".repeat(61);
    static final String[] TARGETS = {
      "{s}.f_plain",
      "f_plain",
      "{s}.\"F_Quoted\"",
      "{s}.F_Quoted",
      "{s}.u_plain",
      "{s}.u_parent",
      "{s}.f_inh_parent",
      "{s}.v_over_f",
      "{s}.f_part",
      "{s}." + LONG + "xyz",
      "{s}2.f_plain",
      "{s}.u_plain f_plain",
      "ONLY {s}.f_inh_parent",
      "{s}.f_child"
    };
    static final String[] LITERALS = {
      "'x'",
      "'a\\'' -- '",
      "E'b\\'c'",
      "$$d'e$$",
      "'f;g'",
      "'h'' /* '",
      "U&'\\0069'",
      "'k\\' || '",
      "$q$ $$ ' $q$",
      "'\\'",
      "E'\\\\'"
    };
    static final String[] COMMENTS = {
      "", " -- c\n", " /* c */", " /* /* n */ */ ", " /* ' */", "--\n", " /* $$ */"
    };
    static final String[] SETTINGS = {
      "none", "nonstandard", "path-other-first", "path", "temp", "nonstandard+path"
    };

    @Override
    public int[] sizes() {
      return new int[] {
        18, TARGETS.length, LITERALS.length, COMMENTS.length, SETTINGS.length, 5, 4
      };
    }

    @Override
    public String statement(Case c, String s) {
      String t = TARGETS[c.target()].replace("{s}2", other(s)).replace("{s}", s);
      String lit = LITERALS[c.literal()];
      String com = COMMENTS[c.comment()];
      int id = c.id();
      return switch (c.kind()) {
        case 0 -> "UPDATE " + t + " SET note = " + lit + com + " WHERE id = " + id;
        case 1 -> "DELETE FROM " + t + com + " WHERE id = " + id;
        case 2 ->
            "INSERT INTO " + t + " (id, note, n) VALUES (" + (100 + id) + ", " + lit + com + ", 1)";
        case 3 ->
            "WITH w AS (UPDATE "
                + t
                + " SET note = "
                + lit
                + " WHERE id = "
                + id
                + " RETURNING 1) SELECT count(*) FROM w";
        case 4 ->
            "MERGE INTO "
                + t
                + " USING (VALUES ("
                + id
                + ")) v (id) ON id = v.id WHEN MATCHED THEN UPDATE SET note = "
                + lit;
        case 5 ->
            "DO $do$BEGIN UPDATE " + t + " SET note = " + lit + " WHERE id = " + id + "; END$do$";
        case 6 -> "TRUNCATE " + t + " CASCADE";
        case 7 -> "UPDATE " + t + " SET id = id + 100" + com + " WHERE id = " + id;
        case 8 -> "SELECT " + lit + com + "; UPDATE " + t + " SET note = 'two' WHERE id = " + id;
        case 9 -> "UPDATE " + t + " SET note = " + lit + com;
        // the shapes an ORM emits: read-only subqueries, LIKE/ILIKE, ||, = ANY, interval
        // arithmetic, INSERT ... SELECT, DEFAULT in VALUES
        case 11 ->
            "UPDATE "
                + t
                + " SET n = n + 1 WHERE id IN (SELECT u.id FROM "
                + s
                + ".u_plain u WHERE u.note = "
                + lit
                + com
                + " OR u.id = "
                + id
                + ")";
        case 12 ->
            "UPDATE "
                + t
                + " SET note = note || "
                + lit
                + com
                + " WHERE id = ANY(ARRAY["
                + id
                + ", 3])";
        case 13 -> "DELETE FROM " + t + " WHERE lower(note) LIKE " + lit + com + " ESCAPE ''";
        case 14 ->
            "UPDATE " + t + " SET n = n + 1 WHERE note ILIKE " + lit + com + " AND id <> " + id;
        case 15 ->
            "INSERT INTO "
                + t
                + " (id, note, n) SELECT id + 200, note || "
                + lit
                + com
                + ", n FROM "
                + s
                + ".u_plain WHERE id = "
                + id;
        case 16 ->
            "INSERT INTO "
                + t
                + " (id, note, n) VALUES ("
                + (300 + id)
                + ", "
                + lit
                + com
                + ", DEFAULT)";
        case 17 ->
            "DELETE FROM "
                + t
                + " WHERE id = "
                + id
                + " AND now() - interval '1 day' < now()"
                + com;
        default -> "UPDATE " + t + " SET n = n + 1 WHERE note = " + lit + com + " AND id = " + id;
      };
    }

    @Override
    public List<String> settings(Case c, String s) {
      return switch (SETTINGS[c.setting()]) {
        case "nonstandard" -> List.of("SET LOCAL standard_conforming_strings = off");
        case "path-other-first" -> List.of("SET LOCAL search_path = " + other(s) + ", " + s);
        case "path" -> List.of("SET LOCAL search_path = " + s);
        case "temp" ->
            List.of(
                "CREATE TEMP TABLE f_plain (id bigint, note text, n int) ON COMMIT DROP",
                "SET LOCAL search_path = pg_temp, " + s);
        case "nonstandard+path" ->
            List.of("SET LOCAL standard_conforming_strings = off", "SET LOCAL search_path = " + s);
        default -> List.of();
      };
    }

    @Override
    public String fragmentTable(String s) {
      return s + ".f_plain";
    }

    @Override
    public String assignment(Case c) {
      return "note = " + LITERALS[c.literal()] + COMMENTS[c.comment()];
    }

    /** The schema with an unfenced f_plain (the copy has its own). */
    static String other(String s) {
      return s + "2";
    }
  }

  static final class MariaDb implements Grammar {
    static final String[] TARGETS = {
      "{s}.f_plain",
      "{s}.F_PLAIN",
      "{s}.`f_plain`",
      "{s}.u_plain",
      "{s}.u_parent",
      "{s}.v_over_f",
      "{s}.f_child",
      "f_plain"
    };
    static final String[] LITERALS = {
      "'x'", "'a\\'' -- '", "\"b\\\"\" # \"", "'c' #", "'d''e'", "'f\\\\'", "_utf8mb4'g'", "'h;i'"
    };
    static final String[] COMMENTS = {
      "", " # c\n", " -- c\n", " /* c */", " /*! */", "/*!, n = 9 */", " -- \t\n"
    };
    static final String[] SETTINGS = {"none", "no-backslash", "ansi-quotes", "use"};

    @Override
    public int[] sizes() {
      return new int[] {6, TARGETS.length, LITERALS.length, COMMENTS.length, SETTINGS.length, 5, 4};
    }

    @Override
    public String statement(Case c, String s) {
      String t = TARGETS[c.target()].replace("{s}", s);
      String lit = LITERALS[c.literal()];
      String com = COMMENTS[c.comment()];
      int id = c.id();
      String sql =
          switch (c.kind()) {
            case 0 -> "UPDATE " + t + " SET note = " + lit + com + " WHERE id = " + id;
            case 1 -> "DELETE FROM " + t + com + " WHERE id = " + id;
            case 2 ->
                "INSERT INTO "
                    + t
                    + " (id, note, n) VALUES ("
                    + (100 + id)
                    + ", "
                    + lit
                    + com
                    + ", 1)";
            case 3 ->
                "SELECT " + lit + com + "; UPDATE " + t + " SET note = 'two' WHERE id = " + id;
            case 4 -> "UPDATE " + t + " SET id = id + 100" + com + " WHERE id = " + id;
            default -> "UPDATE " + t + " SET note = " + lit + com;
          };
      return switch (SETTINGS[c.setting()]) {
        case "no-backslash" -> "SET STATEMENT sql_mode = 'NO_BACKSLASH_ESCAPES' FOR " + sql;
        case "ansi-quotes" -> "SET STATEMENT sql_mode = 'ANSI_QUOTES' FOR " + sql;
        default -> sql;
      };
    }

    @Override
    public List<String> settings(Case c, String s) {
      return SETTINGS[c.setting()].equals("use") ? List.of("USE " + s) : List.of();
    }

    @Override
    public String fragmentTable(String s) {
      return s + ".f_plain";
    }

    @Override
    public String assignment(Case c) {
      return "note = " + LITERALS[c.literal()] + COMMENTS[c.comment()];
    }
  }

  /** The counts of one run. */
  static final class Figures {
    int generated;
    int accepted;
    int refused;
    int failedInDatabase;
    int violations;
    final List<String> found = new ArrayList<>();

    @Override
    public String toString() {
      return "generated "
          + generated
          + ", accepted "
          + accepted
          + ", refused by the library "
          + refused
          + ", failed in the database "
          + failedInDatabase
          + ", violations "
          + violations;
    }
  }

  private FencingFixture fx;
  private Grammar grammar;
  private HikariDataSource pool;
  private FencedDataSource fenced;
  private List<String> fencedTables;

  @Test
  void onPostgresNoAcceptedStatementOfAStaleHolderChangesAFencedRow() throws Exception {
    fx = new FencingFixture();
    grammar = new Postgres();
    try {
      String s = fx.schema;
      String fencedDdl = " (id bigint PRIMARY KEY, note text, n int)";
      for (String schema : new String[] {s, s + "_c"}) {
        if (!schema.equals(s)) {
          fx.exec("CREATE SCHEMA " + schema);
        }
        fx.exec(
            "CREATE TABLE " + schema + ".f_plain" + fencedDdl,
            "CREATE TABLE " + schema + ".\"F_Quoted\"" + fencedDdl,
            "CREATE TABLE " + schema + "." + Postgres.LONG + fencedDdl,
            "CREATE TABLE " + schema + ".u_plain" + fencedDdl,
            "CREATE TABLE " + schema + ".u_parent" + fencedDdl,
            "CREATE TABLE "
                + schema
                + ".f_child (id bigint PRIMARY KEY, note text, n int, parent_id bigint REFERENCES "
                + schema
                + ".u_parent (id) ON DELETE CASCADE ON UPDATE CASCADE)",
            "CREATE TABLE " + schema + ".f_inh_parent" + fencedDdl,
            "CREATE TABLE " + schema + ".f_inh_child () INHERITS (" + schema + ".f_inh_parent)",
            "CREATE TABLE "
                + schema
                + ".f_part (id bigint, note text, n int) PARTITION BY RANGE (id)",
            "CREATE TABLE "
                + schema
                + ".f_part_low PARTITION OF "
                + schema
                + ".f_part FOR VALUES FROM (0) TO (50)",
            "CREATE TABLE "
                + schema
                + ".f_part_high PARTITION OF "
                + schema
                + ".f_part FOR VALUES FROM (50) TO (1000)",
            "CREATE VIEW "
                + schema
                + ".v_over_f AS SELECT id, note, n FROM "
                + schema
                + ".f_plain");
      }
      fx.exec(
          "CREATE SCHEMA " + s + "2",
          "CREATE TABLE " + s + "2.f_plain" + fencedDdl,
          "CREATE SCHEMA " + s + "_c2",
          "CREATE TABLE " + s + "_c2.f_plain" + fencedDdl);
      FencingMigrations.migrate(
          fx.pool,
          MigrationOptions.builder()
              .schema(fx.fenceSchema)
              .fence(
                  s + ".f_plain",
                  s + ".F_Quoted",
                  s + "." + Postgres.LONG,
                  s + ".f_child",
                  s + ".f_inh_parent",
                  s + ".f_part")
              .build());
      pool = fx.pool;
      fenced = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fx.fenceSchema));
      fencedTables =
          List.of(
              "f_plain",
              "\"F_Quoted\"",
              Postgres.LONG,
              "f_child",
              "f_inh_parent",
              "f_inh_child",
              "f_part_low",
              "f_part_high");
      runAll("PostgreSQL", true);
    } finally {
      closeRaw();
      fx.exec("DROP SCHEMA IF EXISTS " + fx.schema + "_c CASCADE");
      fx.exec("DROP SCHEMA IF EXISTS " + fx.schema + "2 CASCADE");
      fx.exec("DROP SCHEMA IF EXISTS " + fx.schema + "_c2 CASCADE");
      fx.close();
    }
  }

  @Test
  void onMariaDbNoAcceptedStatementOfAStaleHolderChangesAFencedRow() throws Exception {
    fx = FencingFixture.onMariaDb();
    grammar = new MariaDb();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(fx.url + "&allowMultiQueries=true");
    config.setMaximumPoolSize(2);
    try (HikariDataSource multi = new HikariDataSource(config)) {
      String s = fx.schema;
      String ddl = " (id BIGINT PRIMARY KEY, note VARCHAR(100), n INT) ENGINE=InnoDB";
      fx.exec(
          "CREATE TABLE " + s + ".f_plain" + ddl,
          "CREATE TABLE " + s + ".u_plain" + ddl,
          "CREATE TABLE " + s + ".u_parent" + ddl,
          "CREATE TABLE "
              + s
              + ".f_child (id BIGINT PRIMARY KEY, note VARCHAR(100), n INT, parent_id BIGINT,"
              + " FOREIGN KEY (parent_id) REFERENCES "
              + s
              + ".u_parent (id) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB",
          "CREATE VIEW " + s + ".v_over_f AS SELECT id, note, n FROM " + s + ".f_plain");
      FencingMigrations.migrate(
          fx.pool,
          MigrationOptions.builder()
              .schema(fx.fenceSchema)
              .fence(s + ".f_plain", s + ".f_child")
              .build());
      pool = multi;
      fenced = FencedDataSource.wrap(multi, FenceOptions.defaults().withSchema(fx.fenceSchema));
      fencedTables = List.of("f_plain", "f_child");
      runAll("MariaDB", false);
    } finally {
      closeRaw();
      fx.close();
    }
  }

  private void runAll(String dialect, boolean currentHolderToo) throws Exception {
    long started = System.nanoTime();
    List<Case> cases = generate(new Random(SEED), STATEMENTS);
    FencingFixture.Holders holders = fx.staleAndCurrent("fuzz");

    Figures stale = new Figures();
    reseed();
    for (Case c : cases) {
      Outcome outcome = runStale(holders.stale(), c, stale);
      if (outcome == Outcome.VIOLATION) {
        stale.found.add(shrink(holders.stale(), c));
      }
      if (outcome == Outcome.ACCEPTED || outcome == Outcome.VIOLATION) {
        reseed();
      }
    }

    Figures control = new Figures();
    for (Case c : cases) {
      if (runControl(c, control)) {
        reseed();
      }
    }

    Figures current = new Figures();
    if (currentHolderToo) {
      reseed();
      for (Case c : cases) {
        runCurrent(holders.current(), c, current);
      }
    }
    String report =
        "took "
            + (System.nanoTime() - started) / 1_000_000
            + " ms; "
            + dialect
            + " (seed "
            + SEED
            + "): stale holder: "
            + stale
            + "; fencing off (control): "
            + control
            + (currentHolderToo ? "; current holder against the unfenced copy: " + current : "");
    System.out.println("[fuzz] " + report);
    assertThat(stale.found).as(report).isEmpty();
    assertThat(current.found).as(report).isEmpty();
    assertThat(control.violations).as("the control must find violations: " + report).isPositive();
    holders.current().close();
  }

  private List<Case> generate(Random random, int count) {
    int[] sizes = grammar.sizes();
    List<Case> cases = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int[] c = new int[sizes.length];
      for (int f = 0; f < sizes.length; f++) {
        c[f] = random.nextInt(sizes[f]);
      }
      cases.add(new Case(c[0], c[1], c[2], c[3], c[4], c[5], c[6] + 1));
    }
    return cases;
  }

  enum Outcome {
    ACCEPTED,
    REFUSED,
    FAILED,
    VIOLATION
  }

  private Outcome runStale(Lease stale, Case c, Figures figures) {
    figures.generated++;
    String before = checksum(fx.schema);
    Outcome outcome;
    try {
      Fencing.run(
          stale,
          () -> {
            try (Connection connection = fenced.getConnection()) {
              run(connection, c, fx.schema);
            }
          });
      outcome = Outcome.ACCEPTED;
    } catch (SQLFeatureNotSupportedException | IllegalArgumentException refused) {
      outcome = Outcome.REFUSED;
    } catch (Exception failed) {
      outcome = Outcome.FAILED;
    }
    count(figures, outcome);
    if (!checksum(fx.schema).equals(before)) {
      figures.violations++;
      return Outcome.VIOLATION;
    }
    return outcome;
  }

  /** Returns whether it changed anything (then the tables are seeded again). */
  private boolean runControl(Case c, Figures figures) {
    figures.generated++;
    String before = checksum(fx.schema);
    Outcome outcome;
    try (Connection connection = pool.getConnection()) {
      run(connection, c, fx.schema);
      outcome = Outcome.ACCEPTED;
    } catch (Exception failed) {
      outcome = Outcome.FAILED;
    }
    count(figures, outcome);
    if (!checksum(fx.schema).equals(before)) {
      figures.violations++;
      return true;
    }
    return outcome == Outcome.ACCEPTED;
  }

  /**
   * The current holder's accepted statement, and the same statement as written on the unfenced
   * copy: the same rows must change. Refused statements are not run on the copy.
   */
  private void runCurrent(Lease current, Case c, Figures figures) {
    figures.generated++;
    if (c.entry() == 4
        || grammar.settings(c, fx.schema).stream().anyMatch(s -> s.contains("TEMP"))) {
      return; // fragments and temporary tables have no plain twin
    }
    Outcome outcome;
    try {
      Fencing.run(
          current,
          () -> {
            try (Connection connection = fenced.getConnection()) {
              run(connection, c, fx.schema);
            }
          });
      outcome = Outcome.ACCEPTED;
    } catch (SQLFeatureNotSupportedException | IllegalArgumentException refused) {
      outcome = Outcome.REFUSED;
    } catch (Exception failed) {
      outcome = Outcome.FAILED;
    }
    count(figures, outcome);
    if (outcome == Outcome.ACCEPTED) {
      try (Connection connection = pool.getConnection()) {
        run(connection, c, fx.schema + "_c");
      } catch (Exception failed) {
        figures.found.add("accepted, but failed as written on the copy: " + describe(c, fx.schema));
      }
    }
    if (!data(fx.schema).equals(data(fx.schema + "_c"))) {
      figures.violations++;
      figures.found.add("changed other rows than as written: " + describe(c, fx.schema));
      reseed();
    }
  }

  private static void count(Figures figures, Outcome outcome) {
    switch (outcome) {
      case ACCEPTED -> figures.accepted++;
      case REFUSED -> figures.refused++;
      default -> figures.failedInDatabase++;
    }
  }

  /** Runs one case on {@code connection}, in a transaction, through its entry point. */
  private void run(Connection connection, Case c, String schema) throws Exception {
    connection.setAutoCommit(c.entry() == 0 && grammar.settings(c, schema).isEmpty());
    try {
      try (Statement settings = connection.createStatement()) {
        for (String setting : grammar.settings(c, schema)) {
          settings.execute(setting);
        }
      }
      String sql = grammar.statement(c, schema);
      switch (c.entry()) {
        case 0 -> {
          try (Statement s = connection.createStatement()) {
            s.executeUpdate(sql);
          }
        }
        case 1 -> {
          try (Statement s = connection.createStatement()) {
            s.execute(sql);
          }
        }
        case 2 -> {
          try (PreparedStatement s = connection.prepareStatement(sql)) {
            s.execute();
          }
        }
        case 3 -> {
          try (Statement s = connection.createStatement()) {
            s.addBatch(sql);
            s.executeBatch();
          }
        }
        default -> {
          if (connection.isWrapperFor(dev.fencing.jdbc.internal.FencedConnection.class)) {
            try (PreparedStatement s =
                GuardedStatements.update(
                    connection,
                    grammar.fragmentTable(schema),
                    grammar.assignment(c),
                    "id = " + c.id())) {
              s.executeUpdate();
            }
          } else {
            try (Statement s = connection.createStatement()) {
              s.executeUpdate(
                  "UPDATE "
                      + grammar.fragmentTable(schema)
                      + " SET "
                      + grammar.assignment(c)
                      + "\nWHERE (id = "
                      + c.id()
                      + ")");
            }
          }
        }
      }
      if (!connection.getAutoCommit()) {
        connection.commit();
      }
    } catch (Exception e) {
      if (!connection.getAutoCommit()) {
        connection.rollback();
      }
      throw e;
    } finally {
      connection.setAutoCommit(true);
    }
  }

  /** Shrinks a violating case: each choice to its simplest alternative while it still violates. */
  private String shrink(Lease stale, Case c) {
    Case smallest = c;
    for (int field = 0; field < 7; field++) {
      for (int value = field == 6 ? 1 : 0; value < smallest.get(field); value++) {
        Case smaller = smallest.with(field, value);
        reseed();
        if (runStale(stale, smaller, new Figures()) == Outcome.VIOLATION) {
          smallest = smaller;
          break;
        }
      }
    }
    reseed();
    return describe(smallest, fx.schema);
  }

  private String describe(Case c, String schema) {
    String[] entries = {
      "Statement.executeUpdate",
      "Statement.execute",
      "PreparedStatement",
      "addBatch",
      "GuardedStatements"
    };
    return "["
        + entries[c.entry()]
        + "] settings "
        + grammar.settings(c, schema)
        + ": "
        + (c.entry() == 4
            ? "update(" + grammar.fragmentTable(schema) + ", \"" + grammar.assignment(c) + "\")"
            : grammar.statement(c, schema))
        + " "
        + c;
  }

  private Connection raw;

  private void closeRaw() throws SQLException {
    if (raw != null) {
      raw.close();
      raw = null;
    }
  }

  private void exec(String... sql) {
    try {
      if (raw == null || raw.isClosed()) {
        raw = java.sql.DriverManager.getConnection(fx.url);
      }
      try (Statement statement = raw.createStatement()) {
        for (String q : sql) {
          statement.execute(q);
        }
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private java.util.Optional<String> query(String sql) {
    exec();
    try (Statement statement = raw.createStatement();
        java.sql.ResultSet row = statement.executeQuery(sql)) {
      return row.next()
          ? java.util.Optional.ofNullable(row.getString(1))
          : java.util.Optional.empty();
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private void reseed() {
    String s = fx.schema;
    if (fx.mariaDb) {
      exec(
          "SET FOREIGN_KEY_CHECKS = 0",
          "DELETE FROM " + s + ".f_child",
          "DELETE FROM " + s + ".f_plain",
          "DELETE FROM " + s + ".u_plain",
          "DELETE FROM " + s + ".u_parent",
          "INSERT INTO "
              + s
              + ".f_plain (id, note, n) VALUES (1, 'seed', 0), (2, 'seed', 0),"
              + " (3, 'seed', 0), (4, 'seed', 0)",
          "INSERT INTO " + s + ".u_plain (id, note, n) SELECT id, note, n FROM " + s + ".f_plain",
          "INSERT INTO " + s + ".u_parent (id, note, n) SELECT id, note, n FROM " + s + ".f_plain",
          "INSERT INTO "
              + s
              + ".f_child (id, note, n, parent_id) SELECT id, note, n, id FROM "
              + s
              + ".f_plain");
      return;
    }
    List<String> sql = new ArrayList<>();
    sql.add("SET session_replication_role = replica");
    for (String schema : new String[] {s, s + "_c"}) {
      sql.add(
          "TRUNCATE "
              + String.join(
                  ", ",
                  Arrays.stream(
                          new String[] {
                            "f_plain",
                            "\"F_Quoted\"",
                            Postgres.LONG,
                            "u_plain",
                            "u_parent",
                            "f_child",
                            "f_inh_parent",
                            "f_part"
                          })
                      .map(t -> schema + "." + t)
                      .toList()));
      String rows =
          " (id, note, n) VALUES (1, 'seed', 0), (2, 'seed', 0), (3, 'seed', 0), (4, 'seed', 0)";
      for (String t :
          new String[] {
            "f_plain", "\"F_Quoted\"", Postgres.LONG, "u_plain", "u_parent", "f_part"
          }) {
        sql.add("INSERT INTO " + schema + "." + t + rows);
      }
      sql.add(
          "INSERT INTO "
              + schema
              + ".f_inh_parent (id, note, n) VALUES (1, 'seed', 0), (2, 'seed', 0)");
      sql.add(
          "INSERT INTO "
              + schema
              + ".f_inh_child (id, note, n) VALUES (3, 'seed', 0), (4, 'seed', 0)");
      sql.add(
          "INSERT INTO "
              + schema
              + ".f_child (id, note, n, parent_id) SELECT id, note, n, id FROM "
              + schema
              + ".u_parent");
    }
    sql.add("TRUNCATE " + s + "2.f_plain, " + s + "_c2.f_plain");
    exec(sql.toArray(String[]::new));
  }

  /** Every fenced table's rows, fence columns included, as one string. */
  private String checksum(String schema) {
    StringBuilder sql = new StringBuilder("SELECT ");
    for (int i = 0; i < fencedTables.size(); i++) {
      String table = schema + "." + fencedTables.get(i);
      sql.append(i == 0 ? "" : fx.mariaDb ? ", '/', " : " || '/' || ")
          .append(
              fx.mariaDb
                  ? "(SELECT COALESCE(MD5(GROUP_CONCAT(CONCAT_WS('|', t.id, t.note, t.n,"
                      + " t.fence_token) ORDER BY t.id)), '') FROM "
                      + table
                      + " t)"
                  : "(SELECT coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') FROM ONLY "
                      + table
                      + " t)");
    }
    String query = fx.mariaDb ? "SELECT CONCAT(" + sql.substring(7) + ")" : sql.toString();
    return query(query).orElse("");
  }

  /** Every table's rows without the fence columns, for the copy comparison. */
  private String data(String schema) {
    StringBuilder sql = new StringBuilder("SELECT ''");
    for (String t :
        new String[] {
          "f_plain",
          "\"F_Quoted\"",
          Postgres.LONG,
          "u_plain",
          "u_parent",
          "f_child",
          "f_inh_parent",
          "f_part"
        }) {
      sql.append(
              " || '/' || (SELECT coalesce(string_agg((t.id, t.note, t.n)::text, ',' ORDER BY t.id), '') FROM ")
          .append(schema)
          .append('.')
          .append(t)
          .append(" t)");
    }
    return query(sql.toString()).orElse("");
  }
}
