package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.migrations.internal.DriverManagerDataSource;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The migrations on servers whose settings change how SQL is read, and on tables that other tables
 * inherit from.
 */
class ServerSettingsMigrateTest {

  private static TestDb db;
  private static DataSource ds;
  private static String app;

  @BeforeAll
  static void setUp() {
    db = new TestDb();
    ds = TestDb.dataSource();
    app = db.createSchema("mig_ss");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  @Test
  void version3UpgradesATableEnforcedLenientlyUnderVersion2WithNonStandardStrings() {
    String fencing = db.newSchema("mig_ssf");
    FencingMigrations.flywayConfiguration(ds, fencing).target("2").load().migrate();
    TestDb.exec(
        "CREATE TABLE " + app + ".v2_lenient (id int, fence_token bigint NOT NULL DEFAULT 0)",
        "CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON "
            + app
            + ".v2_lenient FOR EACH ROW EXECUTE FUNCTION "
            + fencing
            + ".enforce_fence('lenient')");
    DataSource nonStandard =
        new DriverManagerDataSource(
            TestDb.URL + "&options=-c%20standard_conforming_strings%3Doff", null, null);

    assertThatCode(
            () ->
                FencingMigrations.migrate(
                    nonStandard, MigrationOptions.builder().schema(fencing).build()))
        .doesNotThrowAnyException();
    assertThat(
            TestDb.queryString(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'fencing_truncate'"
                    + " AND tgrelid = ?::regclass",
                app + ".v2_lenient"))
        .contains("enforce_fence_truncate('lenient')");
  }

  @Test
  void enforcingATableThatOthersInheritFromEnforcesEveryInheritor() throws SQLException {
    String fencing = db.newSchema("mig_ssi");
    TestDb.exec(
        "CREATE TABLE " + app + ".base (id bigint PRIMARY KEY, note text)",
        "CREATE TABLE " + app + ".heir () INHERITS (" + app + ".base)",
        "CREATE TABLE " + app + ".grand_heir () INHERITS (" + app + ".heir)");

    FencingMigrations.migrate(
        ds,
        MigrationOptions.builder()
            .schema(fencing)
            .enforce(app + ".base", EnforcementMode.STRICT)
            .build());

    for (String table : new String[] {"base", "heir", "grand_heir"}) {
      assertThat(
              TestDb.queryLong(
                  "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass"
                      + " AND tgname IN ('fencing_enforce', 'fencing_truncate') AND tgenabled <> 'D'",
                  app + "." + table))
          .as("enforcement triggers on %s", table)
          .isEqualTo(2);
    }
    TestDb.exec(
        "SET session_replication_role = replica",
        "INSERT INTO " + app + ".grand_heir (id, note) VALUES (1, 'before')");
    assertThatThrownBy(() -> TestDb.exec("UPDATE " + app + ".base SET note = 'lease-less'"))
        .as("strict enforcement of a row of an inheritor, written through the parent")
        .hasMessageContaining("fencing");
    assertThat(TestDb.queryString("SELECT note FROM " + app + ".grand_heir")).isEqualTo("before");
    assertThat(
            FencingMigrations.migrate(
                    ds,
                    MigrationOptions.builder()
                        .schema(fencing)
                        .enforce(app + ".base", EnforcementMode.STRICT)
                        .build())
                .changedNothing())
        .isTrue();
  }
}
