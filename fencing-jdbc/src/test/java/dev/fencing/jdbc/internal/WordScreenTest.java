package dev.fencing.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.internal.PlainDmlGuard.PassThrough;
import dev.fencing.jdbc.internal.PlainDmlGuard.Refused;
import dev.fencing.jdbc.internal.PlainDmlGuard.Registration;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The word screen, which judges plain SQL where it is not rewritten: it matches identifiers as
 * PostgreSQL resolves them (not substrings, a qualified name only in its schema), in trigger mode
 * only fenced tables without the trigger count, and its refusal names the real cause.
 */
class WordScreenTest {

  private static final Registration CURRENT = new Registration("orders", 2, "lease-b");

  private static String here;
  private static String there;

  @BeforeAll
  static void setUp() {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    here = ("ws_" + suffix).toLowerCase(Locale.ROOT);
    there = ("wso_" + suffix).toLowerCase(Locale.ROOT);
    String fenced = " (id bigint PRIMARY KEY, note text, fence_token bigint NOT NULL DEFAULT 0)";
    exec(
        "CREATE SCHEMA " + here,
        "CREATE SCHEMA " + there,
        "CREATE FUNCTION "
            + here
            + ".noop() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$BEGIN RETURN NEW; END$$",
        "CREATE TABLE " + here + ".acct" + fenced,
        "CREATE TABLE " + here + ".tacct" + fenced,
        "CREATE TABLE " + here + ".charges" + fenced,
        "CREATE TABLE " + there + ".charges" + fenced,
        "CREATE TRIGGER fencing_enforce BEFORE UPDATE ON "
            + here
            + ".tacct FOR EACH ROW"
            + " EXECUTE FUNCTION "
            + here
            + ".noop()",
        "CREATE TRIGGER fencing_enforce BEFORE UPDATE ON "
            + here
            + ".charges FOR EACH ROW"
            + " EXECUTE FUNCTION "
            + here
            + ".noop()");
  }

  @AfterAll
  static void tearDown() {
    exec(
        "DROP SCHEMA IF EXISTS " + here + " CASCADE",
        "DROP SCHEMA IF EXISTS " + there + " CASCADE");
  }

  /** The screen of trigger mode, over this test's two schemas only. */
  private static PlainDmlGuard triggerModeScreen() throws SQLException {
    try (Connection c = DriverManager.getConnection(PlainDmlGuardTest.URL)) {
      return PlainDmlGuard.withoutParser(
          FencedTables.read(c).onlyInSchema(here, there).withoutEnforcementTrigger());
    }
  }

  @Test
  void aTableWhoseNameContainsAFencedTablesNameIsNotThatTable() throws SQLException {
    assertThat(
            triggerModeScreen()
                .rewrite("UPDATE " + here + ".tacct SET note = ? WHERE id = ?", CURRENT))
        .isInstanceOf(PassThrough.class);
  }

  @Test
  void aOneLetterFencedTableDoesNotRefuseEveryStatementWithThatLetter() throws SQLException {
    exec("CREATE TABLE " + here + ".a (id bigint, fence_token bigint NOT NULL DEFAULT 0)");
    try {
      PlainDmlGuard screen = triggerModeScreen();
      assertThat(screen.rewrite("UPDATE " + here + ".tacct SET note = ? WHERE id = 1", CURRENT))
          .isInstanceOf(PassThrough.class);
      assertThat(screen.rewrite("UPDATE " + here + ".a SET id = 1", CURRENT))
          .isInstanceOf(Refused.class);
    } finally {
      exec("DROP TABLE " + here + ".a");
    }
  }

  @Test
  void aQualifiedNameMeansItsOwnSchemasTable() throws SQLException {
    PlainDmlGuard screen = triggerModeScreen();
    assertThat(screen.rewrite("UPDATE " + here + ".charges SET note = ? WHERE id = ?", CURRENT))
        .isInstanceOf(PassThrough.class);
    assertThat(screen.rewrite("UPDATE " + there + ".charges SET note = ? WHERE id = ?", CURRENT))
        .isInstanceOf(Refused.class);
    assertThat(screen.rewrite("UPDATE charges SET note = ? WHERE id = ?", CURRENT))
        .as("unqualified, it may mean the fenced table without the trigger on some search_path")
        .isInstanceOf(Refused.class);
  }

  @Test
  void theRefusalNamesTheTableAndNotAMissingLibrary() throws SQLException {
    assertThat(triggerModeScreen().rewrite("UPDATE " + here + ".acct SET note = ?", CURRENT))
        .isInstanceOfSatisfying(
            Refused.class,
            refused ->
                assertThat(refused.message())
                    .contains("acct")
                    .doesNotContain("not on the class path"));
  }

  static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(PlainDmlGuardTest.URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }
}
