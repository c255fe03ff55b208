package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Statements that PostgreSQL reads differently from a naive reading of their text, sent by a stale
 * holder whose lease still reports held, after the successor registered: backslashes while {@code
 * standard_conforming_strings} is off, a temporary table that hides a fenced table's name, a
 * cascading foreign key from an unfenced parent into a fenced child, and a table that inherits from
 * an enforced one. Each stale attempt may fail in any way, but must leave every fenced row as it
 * was; each has a control with fencing off that shows the same statement changing them. The current
 * holder's statements in trigger mode must not be refused.
 */
class ServerReadingTest {

  private static FencingFixture fx;
  private static FencedDataSource db;
  private static FencedDataSource triggerDb;
  private Lease stale;
  private Lease current;

  /** Work inside a scope. */
  @FunctionalInterface
  interface Work {
    void run(Connection connection) throws Exception;
  }

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
    String s = fx.schema;
    fx.exec(
        "CREATE TABLE " + s + ".notes (id bigint PRIMARY KEY, note text NOT NULL)",
        "CREATE TABLE " + s + ".parent_u (id bigint PRIMARY KEY)",
        "CREATE TABLE "
            + s
            + ".child_f (id bigint PRIMARY KEY, parent_id bigint REFERENCES "
            + s
            + ".parent_u (id) ON DELETE CASCADE ON UPDATE CASCADE)",
        "CREATE TABLE " + s + ".inh_parent (id bigint PRIMARY KEY, note text NOT NULL)",
        "CREATE TABLE " + s + ".inh_child () INHERITS (" + s + ".inh_parent)",
        "CREATE TABLE " + s + ".ledger (id bigint PRIMARY KEY, note text NOT NULL)",
        "CREATE VIEW " + s + ".notes_view AS SELECT id, note FROM " + s + ".notes");
    FencingMigrations.migrate(
        fx.pool,
        MigrationOptions.builder()
            .schema(fx.fenceSchema)
            .fence(s + ".notes", s + ".child_f")
            .enforce(s + ".inh_parent", EnforcementMode.STRICT)
            .enforce(s + ".ledger", EnforcementMode.STRICT)
            .build());
    db = FencedDataSource.wrap(fx.pool, FenceOptions.defaults().withSchema(fx.fenceSchema));
    triggerDb =
        FencedDataSource.wrap(
            fx.pool, FenceOptions.defaults().withSchema(fx.fenceSchema).withTriggerMode(true));
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @BeforeEach
  void seed() {
    FencingFixture.Holders holders = fx.staleAndCurrent("reading");
    stale = holders.stale();
    current = holders.current();
    String s = fx.schema;
    fx.exec(
        "SET session_replication_role = replica",
        "TRUNCATE " + s + ".notes, " + s + ".parent_u, " + s + ".child_f, " + s + ".ledger",
        "DELETE FROM " + s + ".inh_parent",
        "INSERT INTO " + s + ".notes (id, note) VALUES (1, 'successor'), (2, 'successor')",
        "INSERT INTO " + s + ".parent_u (id) VALUES (1), (2)",
        "INSERT INTO " + s + ".child_f (id, parent_id) VALUES (10, 1), (20, 2)",
        "INSERT INTO " + s + ".inh_parent (id, note) VALUES (1, 'successor')",
        "INSERT INTO " + s + ".inh_child (id, note) VALUES (2, 'successor')",
        "INSERT INTO " + s + ".ledger (id, note) VALUES (1, 'successor')");
  }

  /** The rows of a table as one string, in the database: what no stale statement may change. */
  private static String rows(String table) {
    return fx.queryString(
            "SELECT coalesce(string_agg(t::text, ',' ORDER BY t::text), '') FROM "
                + fx.table(table)
                + " t")
        .orElse("");
  }

  /** Runs {@code work} as the stale holder; whatever it throws, {@code table} must be unchanged. */
  private void staleLeaves(String table, DataSource through, Work work) {
    String before = rows(table);
    Throwable failure = null;
    try {
      Fencing.run(
          stale,
          () -> {
            try (Connection c = through.getConnection()) {
              work.run(c);
            }
          });
    } catch (Throwable refused) {
      failure = refused;
    }
    assertThat(rows(table))
        .as("rows of %s after the stale attempt (it ended with %s)", table, failure)
        .isEqualTo(before);
  }

  /** Runs {@code work} on a connection of the pool, fencing off: it must change {@code table}. */
  private static void withoutFencingChanges(String table, Work work) throws Exception {
    String before = rows(table);
    try (Connection c = fx.pool.getConnection()) {
      work.run(c);
    }
    assertThat(rows(table)).as("the violation fencing prevents").isNotEqualTo(before);
  }

  private static Work execute(String sql) {
    return c -> {
      try (Statement statement = c.createStatement()) {
        statement.execute(sql);
      }
    };
  }

  /** {@code work} in a transaction whose {@code standard_conforming_strings} is off. */
  private static Work nonStandardStrings(Work work) {
    return c -> {
      c.setAutoCommit(false);
      try {
        try (Statement set = c.createStatement()) {
          set.execute("SET LOCAL standard_conforming_strings = off");
        }
        work.run(c);
        c.commit();
      } finally {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
      }
    };
  }

  private static final String BACKSLASH_ASSIGNMENT = "note = 'x\\'' -- '";

  @Test
  void aBackslashFragmentOfGuardedStatementsIsReadAsTheSessionReadsIt() throws Exception {
    Work guarded =
        c -> {
          try (PreparedStatement update =
              GuardedStatements.update(c, fx.table("notes"), BACKSLASH_ASSIGNMENT, "id = 1")) {
            update.executeUpdate();
          }
        };
    staleLeaves("notes", db, nonStandardStrings(guarded));
    withoutFencingChanges(
        "notes",
        nonStandardStrings(
            execute(
                "UPDATE "
                    + fx.table("notes")
                    + " SET "
                    + BACKSLASH_ASSIGNMENT
                    + "\nWHERE id = 1")));
  }

  @Test
  void aBackslashFragmentIsReadAsAConnectionOptionMakesTheSessionReadIt() throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(fx.url + "&options=-c%20standard_conforming_strings%3Doff");
    config.setMaximumPoolSize(2);
    try (HikariDataSource nonStandard = new HikariDataSource(config)) {
      FencedDataSource through =
          FencedDataSource.wrap(nonStandard, FenceOptions.defaults().withSchema(fx.fenceSchema));
      staleLeaves(
          "notes",
          through,
          c -> {
            try (PreparedStatement update =
                GuardedStatements.update(c, fx.table("notes"), BACKSLASH_ASSIGNMENT, "id = 1")) {
              update.executeUpdate();
            }
          });
      staleLeaves(
          "notes",
          through,
          execute(
              "UPDATE " + fx.table("notes") + " SET " + BACKSLASH_ASSIGNMENT + "\nWHERE id = 1"));
    }
  }

  @Test
  void plainSqlIsReadWithTheStringSettingOfTheMomentItRuns() throws Exception {
    String plain =
        "UPDATE " + fx.table("notes") + " SET " + BACKSLASH_ASSIGNMENT + "\nWHERE id = 1";
    staleLeaves("notes", db, nonStandardStrings(execute(plain)));
    staleLeaves(
        "notes",
        db,
        nonStandardStrings(
            c -> {
              try (PreparedStatement update = c.prepareStatement(plain)) {
                update.executeUpdate();
              }
            }));
    withoutFencingChanges("notes", nonStandardStrings(execute(plain)));
  }

  @Test
  void aTemporaryTableOnTheFirstSessionDoesNotUnfenceAName() throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(fx.url + "&currentSchema=" + fx.schema);
    config.setMaximumPoolSize(1);
    try (HikariDataSource onePool = new HikariDataSource(config)) {
      try (Connection c = onePool.getConnection();
          Statement s = c.createStatement()) {
        s.execute("CREATE TEMP TABLE notes (id bigint, note text)");
      }
      FencedDataSource through =
          FencedDataSource.wrap(onePool, FenceOptions.defaults().withSchema(fx.fenceSchema));
      Fencing.run(current, () -> through.getConnection().close());
      try (Connection c = onePool.getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE pg_temp.notes");
      }
      String plain = "UPDATE notes SET note = 'stale' WHERE id = 1";
      staleLeaves("notes", through, execute(plain));
      withoutFencingChanges(
          "notes",
          c -> {
            try (Statement s = c.createStatement()) {
              s.execute("SET search_path = " + fx.schema);
              s.execute(plain);
              s.execute("RESET search_path");
            }
          });
    }
  }

  @Test
  void aCascadeFromAnUnfencedParentDoesNotDeleteFencedRows() throws Exception {
    String delete = "DELETE FROM " + fx.table("parent_u") + " WHERE id = 1";
    staleLeaves("child_f", db, execute(delete));
    withoutFencingChanges("child_f", execute(delete));
  }

  @Test
  void aCascadeFromAnUnfencedParentDoesNotRekeyFencedRows() throws Exception {
    String update = "UPDATE " + fx.table("parent_u") + " SET id = 12 WHERE id = 2";
    staleLeaves("child_f", db, execute(update));
    withoutFencingChanges("child_f", execute(update));
  }

  @Test
  void theRowsOfAnInheritingTableAreEnforcedLikeTheParents() throws Exception {
    String update = "UPDATE " + fx.table("inh_parent") + " SET note = 'stale' WHERE id = 2";
    staleLeaves("inh_child", triggerDb, execute(update));
    staleLeaves("inh_child", db, execute(update));
    String before = rows("inh_child");
    try (Connection c = fx.pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(update);
    } catch (SQLException refused) {
      // strict mode: a write without a registration is refused
    }
    assertThat(rows("inh_child")).as("a lease-less write of a strict table").isEqualTo(before);
    withoutFencingChanges("inh_child", nonTriggered(execute(update)));
  }

  /** {@code work} in a transaction that fires no triggers: the enforcement switched off. */
  private static Work nonTriggered(Work work) {
    return c -> {
      c.setAutoCommit(false);
      try {
        try (Statement set = c.createStatement()) {
          set.execute("SET LOCAL session_replication_role = replica");
        }
        work.run(c);
        c.commit();
      } finally {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
      }
    };
  }

  private void currentRuns(String sql) throws Exception {
    Fencing.run(
        current,
        () -> {
          try (Connection c = triggerDb.getConnection();
              Statement s = c.createStatement()) {
            s.execute(sql);
          }
        });
  }

  private static String ledgerNote() {
    return fx.queryString("SELECT note FROM " + fx.table("ledger") + " WHERE id = 1").orElseThrow();
  }

  @Test
  void inTriggerModeTheCurrentHoldersMergeCteAndDoBlockRun() throws Exception {
    String ledger = fx.table("ledger");
    String merge =
        "MERGE INTO "
            + ledger
            + " t USING (VALUES (1, 'merged')) v (id, note) ON t.id = v.id"
            + " WHEN MATCHED THEN UPDATE SET note = v.note";
    assertThatCode(() -> currentRuns(merge)).doesNotThrowAnyException();
    assertThat(ledgerNote()).isEqualTo("merged");
    assertThatCode(
            () ->
                currentRuns(
                    "WITH u AS (UPDATE "
                        + ledger
                        + " SET note = 'cte' WHERE id = 1 RETURNING id) SELECT count(*) FROM u"))
        .doesNotThrowAnyException();
    assertThat(ledgerNote()).isEqualTo("cte");
    assertThatCode(
            () ->
                currentRuns("DO $$BEGIN UPDATE " + ledger + " SET note = 'do' WHERE id = 1; END$$"))
        .doesNotThrowAnyException();
    assertThat(ledgerNote()).isEqualTo("do");

    staleLeaves("ledger", triggerDb, execute(merge.replace("merged", "stale")));
    withoutFencingChanges("ledger", nonTriggered(execute(merge.replace("merged", "stale"))));
  }

  @Test
  void refusingPlainSqlInTriggerModeRefusesOnlyTablesWithoutTheTrigger() throws Exception {
    FencedDataSource refusing =
        FencedDataSource.wrap(
            fx.pool,
            FenceOptions.defaults()
                .withSchema(fx.fenceSchema)
                .withTriggerMode(true)
                .withPlainSql(FenceOptions.PlainSql.REFUSE));
    Fencing.run(
        current,
        () -> {
          try (Connection c = refusing.getConnection();
              PreparedStatement update =
                  c.prepareStatement(
                      "UPDATE " + fx.table("ledger") + " SET note = ? WHERE id = ?")) {
            update.setString(1, "refusing");
            update.setLong(2, 1);
            assertThat(update.executeUpdate()).isEqualTo(1);
          }
        });
    assertThat(ledgerNote()).isEqualTo("refusing");
    String before = rows("notes");
    assertThatThrownBy(
            () ->
                Fencing.run(
                    current,
                    () -> {
                      try (Connection c = refusing.getConnection();
                          Statement s = c.createStatement()) {
                        s.executeUpdate("UPDATE " + fx.table("notes") + " SET note = 'x'");
                      }
                    }))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining(fx.table("notes"))
        .hasMessageContaining("REFUSE")
        .hasMessageNotContaining("class path");
    assertThat(rows("notes")).isEqualTo(before);
  }

  @Test
  void anUpdatableViewOverAFencedTableIsNotAWayAround() throws Exception {
    String update = "UPDATE " + fx.table("notes_view") + " SET note = 'stale' WHERE id = 1";
    staleLeaves("notes", db, execute(update));
    withoutFencingChanges("notes", execute(update));
  }

  @Test
  void anUnqualifiedNameOnAnotherSearchPathIsStillTheFencedTable() throws Exception {
    Work update =
        c -> {
          c.setAutoCommit(false);
          try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL search_path = " + fx.schema);
            s.executeUpdate("UPDATE notes SET note = 'stale' WHERE id = 1");
            c.commit();
          } finally {
            if (!c.getAutoCommit()) {
              c.rollback();
              c.setAutoCommit(true);
            }
          }
        };
    staleLeaves("notes", db, update);
    withoutFencingChanges("notes", update);
  }
}
