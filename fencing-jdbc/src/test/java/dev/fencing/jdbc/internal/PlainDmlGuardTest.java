package dev.fencing.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.internal.PlainDmlGuard.Guarded;
import dev.fencing.jdbc.internal.PlainDmlGuard.PassThrough;
import dev.fencing.jdbc.internal.PlainDmlGuard.Refused;
import dev.fencing.jdbc.internal.PlainDmlGuard.Registration;
import dev.fencing.jdbc.internal.PlainDmlGuard.Result;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Plain DML through the rewriter, executed on real PostgreSQL: the current holder's rewritten
 * statements are accepted, a stale holder's are rejected by the database (and the unrewritten
 * statement would have been accepted), rows of other resources are not compared, and shapes the
 * rewriter cannot prove are refused.
 */
class PlainDmlGuardTest {

  static final String URL =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  private static String schema;
  private static String fenceSchema;
  private static String shadow;
  private static FencedTables tables;
  private static PlainDmlGuard guard;

  private static final Registration STALE = new Registration("orders", 1, "lease-a");
  private static final Registration CURRENT = new Registration("orders", 2, "lease-b");
  private static final Registration OTHER = new Registration("invoices", 1001, "lease-y");

  @BeforeAll
  static void setUp() throws SQLException {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("pdg_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("pdgf_" + suffix).toLowerCase(Locale.ROOT);
    shadow = ("pdgs_" + suffix).toLowerCase(Locale.ROOT);
    try {
      exec("SELECT 1");
    } catch (AssertionError e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + URL
              + "; start it (trust auth, database test) or set -Dfencing.test.jdbc",
          e);
    }
    exec(
        "CREATE SCHEMA " + schema,
        "CREATE SCHEMA " + shadow,
        "CREATE TABLE "
            + schema
            + ".items (id bigint PRIMARY KEY, v text, n int, fence_token bigint NOT NULL DEFAULT 0,"
            + " fence_resource text)",
        "CREATE TABLE "
            + schema
            + ".legacy (id bigint PRIMARY KEY, v text, fence_token bigint NOT NULL DEFAULT 0)",
        "CREATE TABLE " + schema + ".plain (id bigint PRIMARY KEY, v text)",
        "CREATE TABLE "
            + schema
            + ".\"Mixed\" (id bigint PRIMARY KEY, v text, fence_token bigint NOT NULL DEFAULT 0,"
            + " fence_resource text)",
        "CREATE TABLE "
            + schema
            + ".hidden (id bigint PRIMARY KEY, v text, fence_token bigint NOT NULL DEFAULT 0,"
            + " fence_resource text)",
        "CREATE TABLE " + shadow + ".hidden (id bigint PRIMARY KEY, v text)",
        "CREATE TABLE " + schema + ".enforced (id bigint PRIMARY KEY, v text)");
    try (HikariDataSource data = new HikariDataSource()) {
      data.setJdbcUrl(URL);
      data.setMaximumPoolSize(4);
      FencingMigrations.migrate(
          data,
          MigrationOptions.builder()
              .schema(fenceSchema)
              .enforce(schema + ".enforced", EnforcementMode.STRICT)
              .build());
    }
    exec(
        "INSERT INTO "
            + fenceSchema
            + ".fence (resource, token, lease_id) VALUES"
            + " ('orders', 1, 'lease-a'), ('invoices', 1001, 'lease-y')",
        // The successor registers: the stale holder (1, lease-a) is fenced off from now on.
        "UPDATE "
            + fenceSchema
            + ".fence SET token = 2, lease_id = 'lease-b'"
            + " WHERE resource = 'orders'");
    try (Connection c = connect()) {
      tables = FencedTables.read(c);
    }
    guard = new PlainDmlGuard(fenceSchema, tables);
  }

  @AfterAll
  static void tearDown() {
    exec(
        "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
        "DROP SCHEMA IF EXISTS " + shadow + " CASCADE",
        "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
  }

  @BeforeEach
  void rows() {
    exec(
        "TRUNCATE " + schema + ".items, " + schema + ".legacy, " + schema + ".plain",
        "INSERT INTO " + schema + ".items (id, v, n) VALUES (1, 'one', 10), (2, 'two', 20)",
        "INSERT INTO " + schema + ".legacy (id, v) VALUES (1, 'one')");
  }

  // --- the current holder is accepted, the stale one rejected; unguarded would be accepted ---

  @Test
  void currentHoldersUpdateIsGuardedAndAcceptedAndStampsTheRow() throws SQLException {
    String sql = "UPDATE items SET v = ?, n = ? WHERE id = ?";
    String guarded = guarded(sql, CURRENT);

    assertThat(execute(guarded, "new", 11, 1L)).isEqualTo(1);
    assertThat(row(1)).isEqualTo("new|11|2|orders");
  }

  @Test
  void staleHoldersUpdateIsRejectedWhereThePlainUpdateWouldBeAccepted() throws SQLException {
    String sql = "UPDATE items SET v = ? WHERE id = ?";

    assertThat(execute(guarded(sql, STALE), "stale", 1L)).isZero();
    assertThat(row(1)).isEqualTo("one|10|0|null");
    assertThat(execute(sql, "stale", 1L)).as("fencing off: the same write lands").isEqualTo(1);
  }

  @Test
  void staleHoldersDeleteIsRejectedWhereThePlainDeleteWouldBeAccepted() throws SQLException {
    String sql = "DELETE FROM items WHERE id = ?";

    assertThat(execute(guarded(sql, STALE), 1L)).isZero();
    assertThat(count("items")).isEqualTo(2);
    assertThat(execute(sql, 1L)).as("fencing off").isEqualTo(1);
    assertThat(execute(guarded(sql, CURRENT), 2L)).isEqualTo(1);
  }

  @Test
  void staleHoldersInsertIsRejectedWhereThePlainInsertWouldBeAccepted() throws SQLException {
    String sql = "INSERT INTO items (id, v, n) VALUES (?, ?, ?)";

    assertThat(execute(guarded(sql, STALE), 3L, "three", 30)).isZero();
    assertThat(count("items")).isEqualTo(2);
    assertThat(execute(sql, 3L, "three", 30)).as("fencing off").isEqualTo(1);
    assertThat(execute(guarded(sql, CURRENT), 4L, "four", 40)).isEqualTo(1);
    assertThat(row(4)).isEqualTo("four|40|2|orders");
  }

  @Test
  void upsertIsGuardedOnBothPaths() throws SQLException {
    String sql =
        "INSERT INTO items (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v";

    assertThat(execute(guarded(sql, STALE), 1L, "stale")).isZero();
    assertThat(execute(guarded(sql, STALE), 5L, "stale")).isZero();
    assertThat(row(1)).isEqualTo("one|10|0|null");
    assertThat(execute(sql, 1L, "stale")).as("fencing off").isEqualTo(1);

    assertThat(execute(guarded(sql, CURRENT), 1L, "upserted")).isEqualTo(1);
    assertThat(execute(guarded(sql, CURRENT), 6L, "inserted")).isEqualTo(1);
    assertThat(row(1)).isEqualTo("upserted|10|2|orders");
    assertThat(row(6)).isEqualTo("inserted|null|2|orders");
  }

  @Test
  void upsertOnANamedConstraintIsGuarded() throws SQLException {
    String sql =
        "INSERT INTO items (id, v) VALUES (?, ?) ON CONFLICT ON CONSTRAINT items_pkey"
            + " DO UPDATE SET v = excluded.v";

    assertThat(execute(guarded(sql, STALE), 1L, "stale")).isZero();
    assertThat(execute(guarded(sql, CURRENT), 1L, "named")).isEqualTo(1);
    assertThat(row(1)).isEqualTo("named|10|2|orders");
  }

  @Test
  void upsertDoesNotOverwriteALegacyRowOfANewerToken() throws SQLException {
    exec("UPDATE " + schema + ".items SET fence_token = 7 WHERE id = 1");
    String sql =
        "INSERT INTO items AS i (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v ="
            + " excluded.v WHERE i.n = ?";

    assertThat(execute(guarded(sql, CURRENT), 1L, "lost", 10)).isZero();
    assertThat(row(1)).isEqualTo("one|10|7|null");
  }

  @Test
  void insertWithReturningAndOnConflictDoNothingAreGuarded() throws SQLException {
    String returning = "INSERT INTO items (id, v) VALUES (?, ?) RETURNING id, v";
    String nothing = "INSERT INTO items (id, v) VALUES (?, ?) ON CONFLICT DO NOTHING";

    assertThat(execute(guarded(returning, STALE), 7L, "stale")).isZero();
    assertThat(execute(guarded(nothing, STALE), 7L, "stale")).isZero();
    assertThat(count("items")).isEqualTo(2);
    assertThat(execute(guarded(returning, CURRENT), 7L, "seven")).isEqualTo(1);
    assertThat(execute(guarded(nothing, CURRENT), 7L, "again")).isZero();
    assertThat(row(7)).isEqualTo("seven|null|2|orders");
  }

  @ParameterizedTest
  @ValueSource(
      ints = {
        Connection.TRANSACTION_READ_COMMITTED,
        Connection.TRANSACTION_REPEATABLE_READ,
        Connection.TRANSACTION_SERIALIZABLE
      })
  void aStaleWriteWaitingForAnInFlightRegistrationIsRejectedWhenItCommits(int isolation)
      throws Exception {
    String resource = "race-" + isolation;
    exec(
        "INSERT INTO "
            + fenceSchema
            + ".fence (resource, token, lease_id) VALUES ('"
            + resource
            + "', 1, 'race-a')");
    String update =
        guarded("UPDATE items SET v = ? WHERE id = ?", new Registration(resource, 1, "race-a"));
    try (Connection successor = connect();
        Connection stale = connect()) {
      successor.setAutoCommit(false);
      stale.setAutoCommit(false);
      stale.setTransactionIsolation(isolation);
      try (Statement snapshot = stale.createStatement()) {
        snapshot.execute("SELECT 1"); // the stale transaction's snapshot predates the commit
      }
      try (Statement register = successor.createStatement()) {
        register.executeUpdate(
            "UPDATE "
                + fenceSchema
                + ".fence SET token = 2, lease_id = 'race-b' WHERE resource = '"
                + resource
                + "'");
      }
      int stalePid = pid(stale);
      CompletableFuture<Integer> staleWrite =
          CompletableFuture.supplyAsync(
              () -> {
                try (PreparedStatement s = stale.prepareStatement(update)) {
                  s.setString(1, "stale");
                  s.setLong(2, 1L);
                  int rows = s.executeUpdate();
                  stale.commit();
                  return rows;
                } catch (SQLException e) {
                  if ("40001".equals(e.getSQLState())) {
                    return -1; // rejected by a serialization failure: nothing written
                  }
                  throw new IllegalStateException(e);
                }
              });
      awaitLockWait(stalePid);
      successor.commit();
      assertThat(staleWrite.get(30, TimeUnit.SECONDS))
          .isEqualTo(isolation == Connection.TRANSACTION_READ_COMMITTED ? 0 : -1);
    }
    assertThat(row(1)).isEqualTo("one|10|0|null");
  }

  @Test
  void aJdbcBatchOfTheRewrittenStatementIsGuardedRowByRow() throws SQLException {
    String sql = "UPDATE items SET n = n + ? WHERE id = ?";
    for (Registration holder : List.of(STALE, CURRENT)) {
      try (Connection c = connect();
          PreparedStatement batch = c.prepareStatement(guarded(sql, holder))) {
        c.setAutoCommit(false);
        for (long id = 1; id <= 2; id++) {
          batch.setInt(1, 1);
          batch.setLong(2, id);
          batch.addBatch();
        }
        int[] counts = batch.executeBatch();
        c.commit();
        assertThat(counts).containsExactly(holder == STALE ? new int[] {0, 0} : new int[] {1, 1});
      }
    }
    assertThat(row(1)).isEqualTo("one|11|2|orders");
  }

  // --- per-resource tokens (issue 10 item 5) ---

  @Test
  void aRowWrittenUnderAnotherResourceIsNotCompared() throws SQLException {
    assertThat(execute(guarded("UPDATE items SET v = ? WHERE id = ?", OTHER), "y", 1L))
        .isEqualTo(1);
    assertThat(row(1)).isEqualTo("y|10|1001|invoices");

    assertThat(execute(guarded("UPDATE items SET v = ? WHERE id = ?", CURRENT), "x", 1L))
        .as("current holder of orders, token 2, on a row last written by invoices 1001")
        .isEqualTo(1);
    assertThat(row(1)).isEqualTo("x|10|2|orders");
    assertThat(execute(guarded("UPDATE items SET v = ? WHERE id = ?", STALE), "old", 1L))
        .as("the stale holder of orders is still rejected")
        .isZero();

    exec("UPDATE " + schema + ".items SET fence_token = 1001, fence_resource = 'invoices'");
    String upsert =
        "INSERT INTO items (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v = excluded.v";
    assertThat(execute(guarded(upsert, CURRENT), 2L, "upserted")).isEqualTo(1);
    assertThat(row(2)).isEqualTo("upserted|20|2|orders");
  }

  @Test
  void aLegacyRowWithoutResourceIsComparedByToken() throws SQLException {
    exec("UPDATE " + schema + ".items SET fence_token = 5 WHERE id = 1");

    assertThat(execute(guarded("UPDATE items SET v = ? WHERE id = ?", CURRENT), "x", 1L)).isZero();
    assertThat(execute(guarded("UPDATE items SET v = ? WHERE id = ?", CURRENT), "x", 2L))
        .isEqualTo(1);
  }

  @Test
  void aTableWithoutTheResourceColumnGetsTheTokenGuardOnly() throws SQLException {
    String sql = "UPDATE legacy SET v = ? WHERE id = ?";
    String guarded = guarded(sql, CURRENT);

    assertThat(guarded).doesNotContain("fence_resource");
    assertThat(execute(guarded(sql, STALE), "stale", 1L)).isZero();
    assertThat(execute(guarded, "current", 1L)).isEqualTo(1);
    assertThat(query("SELECT v || '|' || fence_token FROM " + schema + ".legacy WHERE id = 1"))
        .isEqualTo("current|2");
  }

  // --- comments and literals (issue 10 item 8) ---

  @Test
  void aLineCommentCannotSwallowTheGuards() throws SQLException {
    // PostgreSQL reads "-- done WHERE id = 1" as a comment: this updates every row.
    String sql = "UPDATE items SET v = 'five' -- done WHERE id = 1";
    String stale = guarded(sql, STALE);

    assertThat(stale).doesNotContain("--").contains("fence_token <= 1");
    assertThat(execute(stale)).isZero();
    assertThat(execute(sql)).as("fencing off: every row").isEqualTo(2);
  }

  @Test
  void commentsAreDroppedAndLiteralsWithCommentMarkersAndSemicolonsKept() throws SQLException {
    String sql =
        "UPDATE items /* a */ SET v = 'a;b -- c /* d' -- e\n WHERE id = ? /* f */ AND n = ? --";
    String guarded = guarded(sql, CURRENT);

    assertThat(guarded).doesNotContain("/* a").doesNotContain("-- e").doesNotContain("/* f");
    assertThat(execute(guarded, 1L, 10)).isEqualTo(1);
    assertThat(row(1)).isEqualTo("a;b -- c /* d|10|2|orders");
  }

  @Test
  void aNestedBlockCommentDoesNotHideTheGuards() throws SQLException {
    String sql = "UPDATE items SET v = 'n' /* outer /* inner */ still comment */ WHERE id = ?";
    Result result = guard.rewrite(sql, STALE);

    if (result instanceof Guarded guarded) {
      assertThat(guarded.sql()).doesNotContain("/*").contains("fence_token <= 1");
      assertThat(execute(guarded.sql(), 1L)).isZero();
    } else {
      assertThat(result).isInstanceOf(Refused.class);
    }
  }

  @Test
  void nestedCommentsAreReadAsPostgreSqlReadsThem() throws SQLException {
    // PostgreSQL nests block comments: the target is items, not plain.
    String sql = "UPDATE /* a /* b */ plain SET v = 'p' -- */ items SET v = 'i' WHERE id = ?";

    assertThat(execute(guarded(sql, STALE), 1L)).isZero();
    assertThat(execute(guarded(sql, CURRENT), 1L)).isEqualTo(1);
    assertThat(row(1)).isEqualTo("i|10|2|orders");
  }

  @Test
  void aBackslashInAStandardStringIsRefusedSinceAnotherSettingReadsItAsAnEscape() {
    // with standard_conforming_strings off (a SET away), 'a\' WHERE id = ?' is one literal
    assertThat(guard.rewrite("UPDATE items SET v = 'a\\' WHERE id = ?", CURRENT))
        .isInstanceOfSatisfying(
            Refused.class,
            refused -> assertThat(refused.message()).contains("standard_conforming_strings"));
    assertThat(guard.rewrite("UPDATE items SET v = E'a\\\\' WHERE id = ?", CURRENT))
        .as(
            "jOOQ renders E'a\\\\' as 'a\\', a literal that would end later when strings are not standard")
        .isInstanceOfSatisfying(
            Refused.class, refused -> assertThat(refused.message()).contains("jOOQ would render"));
  }

  @Test
  void aQuestionMarkInACommentIsNotAParameter() throws SQLException {
    String sql = "UPDATE items SET v = ? -- why? /* ? */\n WHERE id = ? /* and? */";
    String guarded = guarded(sql, CURRENT);

    assertThat(guarded).doesNotContain("why");
    assertThat(execute(guarded, "q", 2L)).isEqualTo(1);
    assertThat(row(2)).isEqualTo("q|20|2|orders");
  }

  // --- parameters keep their order ---

  @Test
  void severalParametersKeepTheirOrder() throws SQLException {
    String sql =
        "UPDATE items SET v = ?, n = n + ? WHERE id = ? AND v <> ? AND n BETWEEN ? AND ?"
            + " RETURNING id";
    String guarded = guarded(sql, CURRENT);

    assertThat(execute(guarded, "p1", 5, 2L, "nope", 19, 21)).isEqualTo(1);
    assertThat(row(2)).isEqualTo("p1|25|2|orders");
  }

  @Test
  void upsertParametersAfterTheValuesKeepTheirOrder() throws SQLException {
    String sql =
        "INSERT INTO items (id, v, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE"
            + " SET v = ?, n = items.n + ? WHERE items.v <> ?";

    assertThat(execute(guarded(sql, CURRENT), 2L, "ignored", 0, "set", 3, "zzz")).isEqualTo(1);
    assertThat(row(2)).isEqualTo("set|23|2|orders");
  }

  // --- the rewrite keeps the statement's meaning ---

  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE items SET n = n * 2 + 1, v = lower(upper(v)) WHERE id IN (1, 2)",
        "UPDATE items SET v = coalesce(nullif(v, 'one'), 'was one') WHERE n BETWEEN 5 AND 15",
        "UPDATE items SET v = CASE WHEN n > 15 THEN 'big' ELSE 'small' END WHERE v = 'two'"
            + " OR v < 'p'",
        "UPDATE items SET n = CAST('7' AS int) + '1'::int WHERE v IS DISTINCT FROM 'two'",
        "UPDATE items SET v = '{\"a\": 1}'::jsonb::text, n = '12.5'::numeric(4, 1)::int WHERE id = 2",
        "UPDATE items SET v = '2020-01-02'::date::text WHERE id = 2",
        "UPDATE items SET v = trim('  t  ') WHERE NOT (n < 15) AND v IS NOT NULL",
        "UPDATE items i SET v = greatest(i.v, 'p'), n = -abs(i.n) WHERE (i.id, i.n) = (2, 20)",
        "DELETE FROM items WHERE v NOT IN ('one') OR n IS NULL",
        "UPDATE items SET v = DEFAULT WHERE char_length(v) = 3",
        "UPDATE ITEMS SET V = 'upper' WHERE ID = 1 AND \"v\" = 'one'",
        "UPDATE items SET v = 'when' WHERE v IN ('one', 'two') AND n >= 10 AND n <= 20",
        "UPDATE items SET v = $$a -- b /* c$$ WHERE id = 1",
        "UPDATE items SET v = E'a\\'b\\t' WHERE id = 2"
      })
  void theRewrittenStatementChangesTheSameRowsTheSameWay(String sql) throws SQLException {
    String untouched = afterRolledBack("SELECT 1");
    String plainResult = afterRolledBack(sql);
    String guardedResult = afterRolledBack(guarded(sql, CURRENT));

    assertThat(plainResult).as("the statement changes something").isNotEqualTo(untouched);
    assertThat(guardedResult).isEqualTo(plainResult);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE items SET v = ?, n = ? WHERE id = ?",
        "UPDATE items SET n = n + 1 WHERE id = ?",
        "UPDATE items SET v = coalesce(?, v) WHERE id = ? AND (? IS NULL OR n = ?)",
        "UPDATE items SET v = CASE WHEN n > ? THEN ? ELSE v END WHERE id IN (?, ?, ?)",
        "UPDATE items SET v = lower(?), n = abs(?) WHERE n BETWEEN ? AND ? AND v <> ?",
        "UPDATE items SET v = ? WHERE id = ? AND v IS NOT DISTINCT FROM ?",
        "UPDATE items SET v = NULL, n = DEFAULT WHERE id = ? RETURNING id, v",
        "UPDATE items SET v = ?::text WHERE id = CAST(? AS bigint)",
        "DELETE FROM items WHERE id = ? AND n < ?",
        "INSERT INTO items (id, v, n) VALUES (?, ?, ?)",
        "INSERT INTO items (id, v) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
        "INSERT INTO items (id, v, n) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE"
            + " SET v = EXCLUDED.v, n = items.n + EXCLUDED.n RETURNING id"
      })
  void commonDaoShapesAreGuarded(String sql) {
    assertThat(guard.rewrite(sql, CURRENT)).as(sql).isInstanceOf(Guarded.class);
  }

  // --- what passes through ---

  @ParameterizedTest
  @ValueSource(
      strings = {
        "SELECT * FROM items WHERE id = ?",
        "SELECT * FROM items FOR UPDATE",
        "SELECT v->>'a' FROM items WHERE v::jsonb ? 'a'",
        "UPDATE plain SET v = ? WHERE id = ?",
        "INSERT INTO plain (id, v) SELECT id, v FROM items",
        "UPDATE Mixed SET v = 'x'",
        "CREATE TEMPORARY TABLE tmp (id int)",
        "SET search_path = public",
        "SELECT 1; SELECT 2"
      })
  void statementsThatWriteNoFencedTablePassThrough(String sql) {
    assertThat(guard.rewrite(sql, CURRENT)).as(sql).isInstanceOf(PassThrough.class);
  }

  @Test
  void namesResolveConservativelyAndThroughQuoting() {
    // an unqualified name means the fenced table on some session's search_path: guarded (the
    // guarded form fails at the database where the name means the table without fence_token)
    assertThat(guard.rewrite("UPDATE hidden SET v = 'x'", CURRENT)).isInstanceOf(Guarded.class);
    assertThat(guard.rewrite("UPDATE " + shadow + ".hidden SET v = 'x'", CURRENT))
        .isInstanceOf(PassThrough.class);
    assertThat(guard.rewrite("UPDATE " + schema + ".hidden SET v = 'x'", CURRENT))
        .isInstanceOf(Guarded.class);
    assertThat(guard.rewrite("UPDATE \"Mixed\" SET v = 'x'", CURRENT)).isInstanceOf(Guarded.class);
    assertThat(guard.rewrite("UPDATE ITEMS SET v = 'x'", CURRENT)).isInstanceOf(Guarded.class);
    assertThat(guard.rewrite("UPDATE \"ITEMS\" SET v = 'x'", CURRENT))
        .isInstanceOf(PassThrough.class);
  }

  // --- what is refused ---

  @ParameterizedTest
  @ValueSource(
      strings = {
        "WITH x AS (DELETE FROM plain RETURNING id) UPDATE items SET v = 'w' WHERE id IN (1)",
        "WITH x AS (UPDATE items SET v = 'w' RETURNING id) SELECT * FROM x",
        "UPDATE items SET v = plain.v FROM plain WHERE plain.id = items.id",
        "DELETE FROM items USING plain WHERE plain.id = items.id",
        "UPDATE items SET v = (SELECT v FROM plain LIMIT 1)",
        "UPDATE items SET n = nextval('some_seq') WHERE id = 1",
        "UPDATE items SET v = my_function(v) WHERE id = 1",
        "UPDATE items SET n = random() * 10",
        "UPDATE items SET v = 'a cast(' WHERE id = 1",
        "UPDATE items SET n = n * 1e0 WHERE id = 1",
        "UPDATE items SET v = (?::bit(3))::text WHERE id = 1",
        "UPDATE items SET n = (?::float(10))::int WHERE id = 1",
        "UPDATE items SET v = (DATE '2020-01-01')::text WHERE id = 1",
        "UPDATE items SET v = ? WHERE id = $1",
        "UPDATE items SET v = 'a' 'b' WHERE id = 1",
        "UPDATE items SET fence_token = 9223372036854775807",
        "UPDATE items SET v = 'x', fence_resource = 'other' WHERE id = 1",
        "INSERT INTO items (id, v, fence_token) VALUES (9, 'x', 99)",
        "INSERT INTO items (id, v) VALUES (8, 'a'), (9, 'b')",
        "INSERT INTO items VALUES (9, 'x', 1)",
        "UPDATE items SET v = 'a'; DELETE FROM plain",
        "UPDATE items SET v = jsonb_set(v::jsonb, '{a}', '1')::text WHERE v::jsonb ? 'a'",
        "MERGE INTO items t USING plain p ON t.id = p.id WHEN MATCHED THEN UPDATE SET v = p.v",
        "TRUNCATE items",
        "COPY items FROM STDIN",
        "DO $$ BEGIN UPDATE items SET v = 'x'; END $$",
        "UPDATE ONLY items SET v = 'x'",
        "UPDATE U&\"\\0069tems\" SET v = 'x'",
        "DELETE FROM ONLY items WHERE id = 1",
        "INSERT INTO ONLY items (id, v) VALUES (9, 'x')",
        "EXPLAIN ANALYZE UPDATE items SET v = 'x'",
        "UPDATE items SET v = 'x' WHERE id = 1 FOR UPDATE",
        "UPDATE items SET v = CASE WHEN ? THEN 'a' ELSE v END WHERE id = ?",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT id FROM plain UNION SELECT 1)",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT id FROM plain FOR UPDATE)",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT id FROM plain ORDER BY id LIMIT 1)",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT p.id FROM plain p JOIN items i ON true)",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT id FROM generate_series(1, 3) id)",
        "UPDATE items SET v = 'x' WHERE id IN (WITH w AS (SELECT 1 id) SELECT id FROM w)",
        "UPDATE items SET v = 'x' WHERE id = any(SELECT nextval('some_seq'))",
        "UPDATE items SET n = (SELECT count(*) FROM plain) WHERE id = 1",
        "INSERT INTO items (id, v) SELECT max(id) + 1, 'x' FROM plain",
        "INSERT INTO items (id, v) SELECT DISTINCT id, v FROM plain",
        "INSERT INTO items (id, v) SELECT id, v FROM plain UNION SELECT 9, 'x'",
        "INSERT INTO items (id, v, v) VALUES (?, DEFAULT, ?)",
        "UPDATE items SET v = 'x' WHERE now() - interval '1' day < now()",
        "UPDATE items SET v = 'x' WHERE v SIMILAR TO 'a%'",
        "INSERT INTO items (id, v, v) VALUES (?, 'a', ?)",
        "INSERT INTO items AS i (id, \"v\", V) VALUES (?, 'a', ?)"
      })
  void shapesTheRewriterCannotProveAreRefusedWithBothWaysOut(String sql) {
    Result result = guard.rewrite(sql, CURRENT);

    assertThat(result).as(sql).isInstanceOf(Refused.class);
    String message = ((Refused) result).message();
    assertThat(message)
        .contains(sql.substring(0, Math.min(sql.length(), 40)))
        .contains("GuardedStatements")
        .contains("FencedDsl")
        .contains("withTriggerMode(true)");
    assertThat(((Refused) result).toException().getMessage()).isEqualTo(message);
  }

  /** The shapes an ORM emits that the rewriter proves (executed in OrmSqlCorpusTest). */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE items SET v = 'x' WHERE id IN (SELECT id FROM plain)",
        "UPDATE items SET v = 'x' WHERE id IN (SELECT p.id FROM plain p WHERE p.v = ?)",
        "UPDATE items SET v = (SELECT p.v FROM plain p WHERE p.id = items.id) WHERE id = 1",
        "DELETE FROM items WHERE EXISTS (SELECT 1 FROM plain p WHERE p.id = items.id)",
        "UPDATE items SET v = 'x' WHERE EXISTS (SELECT 1)",
        "DELETE FROM items WHERE id NOT IN (SELECT id FROM " + "plain GROUP BY id HAVING id > 1)",
        "UPDATE items SET v = 'x' WHERE id = any(?)",
        "UPDATE items SET v = 'x' WHERE id <> all(array[1, 2])",
        "UPDATE items SET v = 'x' WHERE v LIKE ?",
        "UPDATE items SET v = 'x' WHERE lower(v) LIKE ? ESCAPE ''",
        "UPDATE items SET v = 'x' WHERE v LIKE ? ESCAPE '!'",
        "UPDATE items SET v = 'x' WHERE v NOT ILIKE 'a%'",
        "UPDATE items SET v = v || 'x' || ? WHERE id = 1",
        "DELETE FROM items WHERE now() - interval '1 day' > now()",
        "INSERT INTO items (id, v) SELECT id, v FROM plain",
        "INSERT INTO items (id, v) SELECT p.id + 10, p.v || ? FROM plain p WHERE p.id > ?",
        "INSERT INTO items DEFAULT VALUES",
        "INSERT INTO items (id, v) VALUES (?, DEFAULT)"
      })
  void shapesAnOrmEmitsAreGuarded(String sql) {
    Result result = guard.rewrite(sql, CURRENT);

    assertThat(result).as(sql).isInstanceOf(Guarded.class);
    assertThat(((Guarded) result).sql())
        .as(sql)
        .doesNotContain("as varchar")
        .contains("fence_token");
  }

  @Test
  void escapeAndIntervalAreRespelledOnlyOutsideLiteralsCommentsAndNames() {
    String sql =
        "UPDATE items SET v = 'interval ''1 day'' escape ''''' /* interval '2 days' */"
            + " WHERE \"interval\" IS NULL AND v LIKE ? ESCAPE ''"
            + " AND now() - interval '1 day' < now()";
    Guarded guarded = (Guarded) guard.rewrite(sql, CURRENT);

    assertThat(guarded.sql())
        .contains("v = 'interval ''1 day'' escape '''''")
        .contains("\"interval\" is null")
        .contains("(v like ? escape '')")
        .contains("(current_timestamp - cast('1 day' as interval))")
        .doesNotContain("\uE000");
  }

  @Test
  void aRefusalQuotesTheStatementAsWrittenAndIsItsOwnType() {
    String sql = "UPDATE items SET v = 'x' WHERE id = any(SELECT id FROM plain UNION SELECT ?)";
    Refused refused = (Refused) guard.rewrite(sql, CURRENT);

    assertThat(refused.statement()).isEqualTo(sql);
    assertThat(refused.reason()).contains("UNION").doesNotContain("null");
    Throwable exception = refused.toException();
    assertThat(exception)
        .isInstanceOf(dev.fencing.jdbc.PlainSqlRefusedException.class)
        .hasMessageContaining("\"" + sql + "\"");
    assertThat(refused.toException().getSQLState()).isEqualTo("0A000");
    // jOOQ's parser failing inside (not a syntax error it reports) is not quoted as its own text
    Refused unparsable =
        (Refused)
            guard.rewrite("UPDATE items SET v = 'x' WHERE v LIKE ? ESCAPE '' ESCAPE ''", CURRENT);
    assertThat(unparsable.reason()).doesNotContain("out of bounds");
  }

  @Test
  void aVeryDeepConditionIsGuardedOrRefusedButNeverPassedThrough() {
    StringBuilder sql = new StringBuilder("UPDATE items SET v = 'x' WHERE id = 0");
    for (int i = 1; i < 20_000; i++) {
      sql.append(" OR id = ").append(i);
    }

    assertThat(guard.rewrite(sql.toString(), CURRENT)).isNotInstanceOf(PassThrough.class);
  }

  @Test
  void refusalNamesTheReason() {
    assertThat(((Refused) guard.rewrite("UPDATE items SET v = f(v)", CURRENT)).message())
        .contains("the function f()");
    assertThat(((Refused) guard.rewrite("UPDATE items SET fence_token = 1", CURRENT)).message())
        .contains("sets fence_token itself");
    assertThat(((Refused) guard.rewrite("UPDATE items SET v = 'x' FROM plain", CURRENT)).message())
        .contains("UPDATE ... FROM");
  }

  @Test
  void withoutTheParserEveryPossibleWriteOfAFencedTableIsRefused() {
    // The screen matches names as substrings: fenced tables of other schemas in the same database
    // (another test's "t", say) would make "UPDATE plain" look like a write of theirs.
    PlainDmlGuard screenOnly = PlainDmlGuard.withoutParser(tables.onlyInSchema(schema));

    assertThat(screenOnly.rewrite("UPDATE items SET v = ? WHERE id = ?", CURRENT))
        .isInstanceOf(Refused.class);
    assertThat(screenOnly.rewrite("insert into \"items\" values (1)", CURRENT))
        .isInstanceOf(Refused.class);
    assertThat(screenOnly.rewrite("insert into ITEMS values (1)", CURRENT))
        .isInstanceOf(Refused.class);
    assertThat(screenOnly.rewrite("insert into \"ITEMS\" values (1)", CURRENT))
        .as("a quoted name is compared exactly, as PostgreSQL does")
        .isInstanceOf(PassThrough.class);
    assertThat(screenOnly.rewrite("SELECT * FROM items", CURRENT)).isInstanceOf(PassThrough.class);
    assertThat(screenOnly.rewrite("UPDATE plain SET v = 'x'", CURRENT))
        .isInstanceOf(PassThrough.class);
  }

  @Test
  void inTriggerModeTablesWithTheTriggerPassThroughAndOthersAreStillGuarded() {
    PlainDmlGuard triggerMode = new PlainDmlGuard(fenceSchema, tables, true, 16);

    assertThat(triggerMode.rewrite("UPDATE enforced SET v = ? WHERE id = ?", CURRENT))
        .isInstanceOf(PassThrough.class);
    assertThat(triggerMode.rewrite("UPDATE items SET v = ? WHERE id = ?", CURRENT))
        .isInstanceOf(Guarded.class);
    assertThat(guard.rewrite("UPDATE enforced SET v = ? WHERE id = ?", CURRENT))
        .as("default mode guards the trigger table too")
        .isInstanceOf(Guarded.class);
  }

  // --- cache ---

  @Test
  void eachStringIsParsedOnceAndANewLeaseOnlyFillsTheSlots() {
    PlainDmlGuard fresh = new PlainDmlGuard(fenceSchema, tables, false, 2);
    String sql = "UPDATE items SET v = ? WHERE id = ?";

    Result first = fresh.rewrite(sql, CURRENT);
    Result again = fresh.rewrite(sql, CURRENT);
    Result otherLease = fresh.rewrite(sql, STALE);

    assertThat(fresh.parsedStatements()).isEqualTo(1);
    assertThat(again).isSameAs(first);
    assertThat(((Guarded) otherLease).sql())
        .isEqualTo(((Guarded) first).sql().replace("lease-b", "lease-a").replace(" 2", " 1"));
  }

  @Test
  void theCacheIsBoundedAndKeepsTheRecentlyUsed() {
    PlainDmlGuard fresh = new PlainDmlGuard(fenceSchema, tables, false, 2);
    String a = "UPDATE items SET v = 'a'";
    String b = "UPDATE items SET v = 'b'";
    String c = "UPDATE items SET v = 'c'";

    fresh.rewrite(a, CURRENT);
    fresh.rewrite(b, CURRENT);
    fresh.rewrite(a, CURRENT);
    fresh.rewrite(c, CURRENT);
    fresh.rewrite(a, CURRENT);
    assertThat(fresh.cachedStatements()).isEqualTo(2);
    assertThat(fresh.parsedStatements()).isEqualTo(3);
    fresh.rewrite(b, CURRENT);
    assertThat(fresh.parsedStatements()).isEqualTo(4);
  }

  @Test
  void concurrentCallersGetTheirOwnLeasesGuardedSql() {
    PlainDmlGuard shared = new PlainDmlGuard(fenceSchema, tables, false, 8);
    List<String> sqls = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      sqls.add("UPDATE items SET n = " + i + " WHERE id = ?");
    }

    List<String> wrong =
        java.util.stream.IntStream.range(0, 2_000)
            .parallel()
            .mapToObj(
                i -> {
                  Registration holder = i % 2 == 0 ? CURRENT : STALE;
                  String sql = ((Guarded) shared.rewrite(sqls.get(i % 16), holder)).sql();
                  boolean right =
                      sql.contains("set n = " + (i % 16) + ",")
                          && sql.contains("lease_id = '" + holder.leaseId() + "'")
                          && sql.contains("fence_token <= " + holder.token() + " ");
                  return right ? null : sql;
                })
            .filter(java.util.Objects::nonNull)
            .toList();

    assertThat(wrong).isEmpty();
  }

  @Test
  void decisionsThatRefuseOrPassAreCachedToo() {
    PlainDmlGuard fresh = new PlainDmlGuard(fenceSchema, tables);

    fresh.rewrite("UPDATE items SET v = f(v)", CURRENT);
    fresh.rewrite("UPDATE items SET v = f(v)", STALE);
    fresh.rewrite("SELECT 1", CURRENT);
    fresh.rewrite("SELECT 1", CURRENT);

    assertThat(fresh.parsedStatements()).isEqualTo(2);
  }

  // --- helpers ---

  private static String guarded(String sql, Registration registration) {
    Result result = guard.rewrite(sql, registration);
    assertThat(result).as(sql + " -> " + result).isInstanceOf(Guarded.class);
    return ((Guarded) result).sql();
  }

  private static int pid(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
      r.next();
      return r.getInt(1);
    }
  }

  /** Waits until the backend waits for a lock, as observed in pg_stat_activity. */
  private static void awaitLockWait(int pid) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!"Lock"
        .equals(query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = " + pid))) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("backend " + pid + " never waited for a lock");
      }
      Thread.sleep(5);
    }
  }

  private static Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(URL);
    try (Statement s = c.createStatement()) {
      s.execute("SET search_path = " + shadow + ", " + schema + ", public");
    }
    return c;
  }

  private static int execute(String sql, Object... parameters) throws SQLException {
    try (Connection c = connect();
        PreparedStatement statement = c.prepareStatement(sql)) {
      for (int i = 0; i < parameters.length; i++) {
        statement.setObject(i + 1, parameters[i]);
      }
      if (statement.execute()) {
        int rows = 0;
        try (ResultSet returned = statement.getResultSet()) {
          while (returned.next()) {
            rows++;
          }
        }
        return rows;
      }
      return statement.getUpdateCount();
    }
  }

  /** Runs {@code sql} in a transaction, reads the table, rolls back. */
  private static String afterRolledBack(String sql) throws SQLException {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute(sql);
        List<String> rows = new ArrayList<>();
        try (ResultSet r = s.executeQuery("SELECT id, v, n FROM items ORDER BY id")) {
          while (r.next()) {
            rows.add(r.getLong(1) + "|" + r.getString(2) + "|" + r.getObject(3));
          }
        }
        return String.join(", ", rows);
      } finally {
        c.rollback();
      }
    }
  }

  private static String row(long id) {
    return query(
        "SELECT concat_ws('|', coalesce(v, 'null'), coalesce(n::text, 'null'), fence_token,"
            + " coalesce(fence_resource, 'null')) FROM "
            + schema
            + ".items WHERE id = "
            + id);
  }

  private static long count(String table) {
    return Long.parseLong(query("SELECT count(*) FROM " + schema + "." + table));
  }

  private static String query(String sql) {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      return r.next() ? r.getString(1) : null;
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }
}
