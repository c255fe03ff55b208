package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.fencing.schema.FenceSchema;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class MigrateTest {
  private static final TestDb db = new TestDb();
  private static DataSource ds;
  private static String app;

  @BeforeAll
  static void setUp() {
    ds = TestDb.dataSource();
    app = db.createSchema("mig_app");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  private static void table(String name) {
    TestDb.exec(
        "CREATE TABLE " + app + "." + name + " (id int PRIMARY KEY, amount int)",
        "INSERT INTO " + app + "." + name + " SELECT g, g FROM generate_series(1, 10) g");
  }

  @Test
  void shouldCreateSchemaColumnsAndTriggersOnAFreshDatabase() {
    String fencing = db.newSchema("mig_fz");
    table("invoices");
    table("charges");

    MigrationReport report =
        FencingMigrations.migrate(
            ds,
            MigrationOptions.builder()
                .schema(fencing)
                .fence(app + ".invoices")
                .enforce(app + ".charges", EnforcementMode.STRICT)
                .build());

    assertThat(report.schemaMigrationsApplied()).isEqualTo(4);
    assertThat(report.schemaVersion()).isEqualTo("4");
    assertThat(report.columnsAdded()).containsExactly(app + ".invoices", app + ".charges");
    assertThat(report.columnsAlreadyPresent()).isEmpty();
    assertThat(report.triggersInstalled()).containsExactly(app + ".charges (strict)");
    assertThat(report.ddlStatements()).isEqualTo(3);
    assertThat(report.attempts()).isEqualTo(3);
    assertThat(report.changedNothing()).isFalse();

    for (String t : new String[] {"invoices", "charges"}) {
      assertThat(
              TestDb.queryString(
                  "SELECT data_type || ' ' || is_nullable || ' ' || column_default"
                      + " FROM information_schema.columns"
                      + " WHERE table_schema = ? AND table_name = ? AND column_name = 'fence_token'",
                  app,
                  t))
          .isEqualTo("bigint NO 0");
      assertThat(TestDb.queryLong("SELECT sum(fence_token) FROM " + app + "." + t)).isZero();
    }
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + fencing + ".fence")).isZero();
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM " + fencing + ".fencing_schema_history WHERE success"))
        .isGreaterThanOrEqualTo(2);
    assertThat(
            TestDb.queryString(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger"
                    + " WHERE tgrelid = ?::regclass AND tgname = 'fencing_enforce'",
                app + ".charges"))
        .contains("BEFORE INSERT OR DELETE OR UPDATE")
        .contains("FOR EACH ROW")
        .contains(fencing + ".enforce_fence('strict')");
    assertThat(
            TestDb.queryString(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger"
                    + " WHERE tgrelid = ?::regclass AND tgname = 'fencing_enforce'",
                app + ".invoices"))
        .isNull();
  }

  @Test
  void shouldChangeNothingWhenRunAgain() {
    String fencing = db.newSchema("mig_fz");
    table("rerun_a");
    table("rerun_b");
    MigrationOptions options =
        MigrationOptions.builder()
            .schema(fencing)
            .fence(app + ".rerun_a")
            .enforce(app + ".rerun_b", EnforcementMode.LENIENT)
            .build();
    FencingMigrations.migrate(ds, options);
    long relfilenode =
        TestDb.queryLong(
            "SELECT relfilenode FROM pg_class WHERE oid = ?::regclass", app + ".rerun_a");

    MigrationReport again = FencingMigrations.migrate(ds, options);

    assertThat(again.changedNothing()).isTrue();
    assertThat(again.schemaMigrationsApplied()).isZero();
    assertThat(again.schemaVersion()).isEqualTo("4");
    assertThat(again.columnsAdded()).isEmpty();
    assertThat(again.columnsAlreadyPresent()).containsExactly(app + ".rerun_a", app + ".rerun_b");
    assertThat(again.triggersInstalled()).isEmpty();
    assertThat(again.triggersAlreadyPresent()).containsExactly(app + ".rerun_b (lenient)");
    assertThat(again.ddlStatements()).isZero();
    assertThat(again.attempts()).isZero();
    assertThat(
            TestDb.queryLong(
                "SELECT relfilenode FROM pg_class WHERE oid = ?::regclass", app + ".rerun_a"))
        .isEqualTo(relfilenode);
  }

  @Test
  void shouldLeaveAlreadyFencedTablesAloneAndFenceTheOthers() {
    String fencing = db.newSchema("mig_fz");
    table("old_fenced");
    table("new_fenced");
    TestDb.exec(
        "ALTER TABLE "
            + app
            + ".old_fenced ADD COLUMN fence_token bigint NOT NULL DEFAULT 0,"
            + " ADD COLUMN fence_resource text",
        "UPDATE " + app + ".old_fenced SET fence_token = 7");

    MigrationReport report =
        FencingMigrations.migrate(
            ds,
            MigrationOptions.builder()
                .schema(fencing)
                .fence(app + ".old_fenced", app + ".new_fenced")
                .build());

    assertThat(report.columnsAlreadyPresent()).containsExactly(app + ".old_fenced");
    assertThat(report.columnsAdded()).containsExactly(app + ".new_fenced");
    assertThat(report.ddlStatements()).isEqualTo(1);
    assertThat(TestDb.queryLong("SELECT min(fence_token) FROM " + app + ".old_fenced"))
        .isEqualTo(7);
  }

  @Test
  void shouldAddTheResourceColumnToTablesFencedBeforeItExisted() {
    String fencing = db.newSchema("mig_fr");
    table("token_only");
    TestDb.exec(
        "ALTER TABLE " + app + ".token_only ADD COLUMN fence_token bigint NOT NULL DEFAULT 0",
        "UPDATE " + app + ".token_only SET fence_token = 7");

    MigrationReport report =
        FencingMigrations.migrate(
            ds, MigrationOptions.builder().schema(fencing).fence(app + ".token_only").build());

    assertThat(report.columnsAdded()).containsExactly(app + ".token_only");
    assertThat(TestDb.queryLong("SELECT min(fence_token) FROM " + app + ".token_only"))
        .isEqualTo(7);
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM " + app + ".token_only WHERE fence_resource IS NULL"))
        .isPositive();
  }

  @Test
  void shouldRefuseAnIncompatibleExistingFenceTokenColumn() {
    String fencing = db.newSchema("mig_fz");
    table("wrong_type");
    TestDb.exec("ALTER TABLE " + app + ".wrong_type ADD COLUMN fence_token int");

    assertThatThrownBy(
            () ->
                FencingMigrations.migrate(
                    ds,
                    MigrationOptions.builder().schema(fencing).fence(app + ".wrong_type").build()))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining(app + ".wrong_type")
        .hasMessageContaining("bigint NOT NULL");
  }

  @Test
  void shouldFailNamingATableThatDoesNotExist() {
    String fencing = db.newSchema("mig_fz");
    assertThatThrownBy(
            () ->
                FencingMigrations.migrate(
                    ds, MigrationOptions.builder().schema(fencing).fence(app + ".nope").build()))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining(app + ".nope")
        .hasMessageContaining("does not exist");
  }

  @Test
  void shouldReplaceTheTriggerWhenTheModeChanges() {
    String fencing = db.newSchema("mig_fz");
    table("mode_change");
    FencingMigrations.migrate(
        ds,
        MigrationOptions.builder()
            .schema(fencing)
            .enforce(app + ".mode_change", EnforcementMode.LENIENT)
            .build());

    MigrationReport report =
        FencingMigrations.migrate(
            ds,
            MigrationOptions.builder()
                .schema(fencing)
                .enforce(app + ".mode_change", EnforcementMode.STRICT)
                .build());

    assertThat(report.triggersInstalled()).containsExactly(app + ".mode_change (strict)");
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass AND NOT tgisinternal",
                app + ".mode_change"))
        .isEqualTo(2);
    assertThat(
            TestDb.queryString(
                "SELECT string_agg(pg_get_triggerdef(oid), '; ' ORDER BY tgname) FROM pg_trigger"
                    + " WHERE tgrelid = ?::regclass",
                app + ".mode_change"))
        .contains("enforce_fence('strict')")
        .contains("enforce_fence_truncate('strict')");
  }

  @Test
  void shouldReenableADisabledTrigger() {
    String fencing = db.newSchema("mig_fz");
    table("disabled");
    MigrationOptions options =
        MigrationOptions.builder()
            .schema(fencing)
            .enforce(app + ".disabled", EnforcementMode.STRICT)
            .build();
    FencingMigrations.migrate(ds, options);
    TestDb.exec("ALTER TABLE " + app + ".disabled DISABLE TRIGGER fencing_enforce");

    MigrationReport report = FencingMigrations.migrate(ds, options);

    assertThat(report.triggersInstalled()).containsExactly(app + ".disabled (strict)");
    assertThat(
            TestDb.queryString(
                "SELECT tgenabled FROM pg_trigger WHERE tgrelid = ?::regclass"
                    + " AND tgname = 'fencing_enforce'",
                app + ".disabled"))
        .isEqualTo("O");

    TestDb.exec("ALTER TABLE " + app + ".disabled DISABLE TRIGGER fencing_truncate");
    assertThat(FencingMigrations.migrate(ds, options).triggersInstalled())
        .containsExactly(app + ".disabled (strict)");
    assertThat(
            TestDb.queryString(
                "SELECT tgenabled FROM pg_trigger WHERE tgrelid = ?::regclass"
                    + " AND tgname = 'fencing_truncate'",
                app + ".disabled"))
        .isEqualTo("O");
  }

  @Test
  void shouldRunFromTheUsersOwnFlywayWithTheDocumentedSettings() {
    String fencing = db.newSchema("mig_fz");
    var result =
        Flyway.configure()
            .dataSource(ds)
            .schemas(fencing)
            .table("fencing_schema_history")
            .locations("classpath:db/fencing")
            .placeholders(Map.of("fencingSchema", fencing))
            .load()
            .migrate();
    assertThat(result.migrationsExecuted).isEqualTo(4);

    // The Java entry point then sees the same history and applies nothing.
    MigrationReport report =
        FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());
    assertThat(report.schemaMigrationsApplied()).isZero();
    assertThat(report.schemaVersion()).isEqualTo("4");
  }

  @Test
  void shouldBringATableEnforcedUnderVersion2UpToTheCurrentContract() throws Exception {
    String fencing = db.newSchema("mig_fz");
    FencingMigrations.flywayConfiguration(ds, fencing).target("2").load().migrate();
    // What an installation of version 2 left on a table: fence_token and the row trigger only.
    TestDb.exec(
        "CREATE TABLE "
            + app
            + ".v2_table (id int PRIMARY KEY, amount int NOT NULL,"
            + " fence_token bigint NOT NULL DEFAULT 0)",
        "INSERT INTO " + app + ".v2_table (id, amount) VALUES (1, 1)",
        "CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON "
            + app
            + ".v2_table FOR EACH ROW EXECUTE FUNCTION "
            + fencing
            + ".enforce_fence('strict')",
        "INSERT INTO " + fencing + ".fence (resource, token, lease_id) VALUES ('v2', 5, 'l5')");

    MigrationReport report =
        FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());

    assertThat(report.schemaVersion()).isEqualTo("4");
    assertThat(
            TestDb.queryString(
                "SELECT pg_get_triggerdef(oid) FROM pg_trigger"
                    + " WHERE tgrelid = ?::regclass AND tgname = 'fencing_truncate'",
                app + ".v2_table"))
        .contains("BEFORE TRUNCATE")
        .contains(fencing + ".enforce_fence_truncate('strict')");
    try (java.sql.Connection c = TestDb.connect();
        java.sql.Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, "v2", 5L, "l5", true);
      s.executeUpdate("UPDATE " + app + ".v2_table SET amount = 2");
      c.commit();
    }
    assertThat(TestDb.queryString("SELECT fence_resource FROM " + app + ".v2_table"))
        .isEqualTo("v2");
  }

  @Test
  void shouldRefuseASchemaThatHoldsOtherTablesButNoFencingHistory() {
    String other = db.createSchema("mig_other");
    TestDb.exec("CREATE TABLE " + other + ".someone_elses (id int)");
    assertThatThrownBy(
            () -> FencingMigrations.migrate(ds, MigrationOptions.builder().schema(other).build()))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("\"" + other + "\"")
        .hasMessageContaining("not a fencing schema")
        .hasMessageContaining("someone_elses");
  }

  @Test
  void shouldRecordTheContractVersionForTheJavaSideToCheck() {
    String fencing = db.newSchema("mig_fz");
    FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());
    assertThat(TestDb.queryLong(FenceSchema.contractQuery(fencing)))
        .isEqualTo(FenceSchema.CONTRACT_VERSION);
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM ("
                    + FenceSchema.fenceSchemasQuery()
                    + ") s"
                    + " WHERE nspname = ?",
                fencing))
        .isEqualTo(1);
    assertThat(
            catchThrowableOfType(
                    java.sql.SQLException.class,
                    () -> {
                      try (java.sql.Connection c = TestDb.connect();
                          java.sql.Statement s = c.createStatement()) {
                        s.executeQuery(FenceSchema.contractQuery(app + "_missing"));
                      }
                    })
                .getSQLState())
        .isEqualTo("3F000");
  }

  @Test
  void shouldRefuseTruncateOfEachPartitionOfAStrictPartitionedTable() throws Exception {
    String fencing = db.newSchema("mig_fz");
    TestDb.exec(
        "CREATE TABLE " + app + ".parted (id int, amount int) PARTITION BY RANGE (id)",
        "CREATE TABLE "
            + app
            + ".parted_1 PARTITION OF "
            + app
            + ".parted"
            + " FOR VALUES FROM (0) TO (100)",
        "INSERT INTO " + app + ".parted VALUES (1, 1)");
    MigrationOptions options =
        MigrationOptions.builder()
            .schema(fencing)
            .enforce(app + ".parted", EnforcementMode.STRICT)
            .build();
    MigrationReport report = FencingMigrations.migrate(ds, options);
    assertThat(report.triggersInstalled())
        .containsExactly(
            app + ".parted (strict)", app + ".parted_1 (strict, partition of " + app + ".parted)");

    for (String t : new String[] {"parted", "parted_1"}) {
      java.sql.SQLException e =
          catchThrowableOfType(
              java.sql.SQLException.class,
              () -> {
                try (java.sql.Connection c = TestDb.connect();
                    java.sql.Statement s = c.createStatement()) {
                  s.execute("TRUNCATE " + app + "." + t);
                }
              });
      assertThat((Throwable) e).as(t).isNotNull();
      assertThat(e.getSQLState()).isEqualTo("ZF003");
    }
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".parted")).isEqualTo(1);

    // A partition attached later gets its trigger when the migration runs again.
    TestDb.exec(
        "CREATE TABLE "
            + app
            + ".parted_2 PARTITION OF "
            + app
            + ".parted"
            + " FOR VALUES FROM (100) TO (200)");
    assertThat(FencingMigrations.migrate(ds, options).triggersInstalled())
        .containsExactly(app + ".parted_2 (strict, partition of " + app + ".parted)");
    assertThat(FencingMigrations.migrate(ds, options).changedNothing()).isTrue();
  }

  @Test
  void shouldBringAPartitionedTableEnforcedUnderVersion2UpToTheCurrentContract() {
    String fencing = db.newSchema("mig_fz");
    FencingMigrations.flywayConfiguration(ds, fencing).target("2").load().migrate();
    TestDb.exec(
        "CREATE TABLE "
            + app
            + ".v2_parted (id int, fence_token bigint NOT NULL DEFAULT 0)"
            + " PARTITION BY RANGE (id)",
        "CREATE TABLE "
            + app
            + ".v2_parted_1 PARTITION OF "
            + app
            + ".v2_parted"
            + " FOR VALUES FROM (0) TO (100)",
        "CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON "
            + app
            + ".v2_parted FOR EACH ROW EXECUTE FUNCTION "
            + fencing
            + ".enforce_fence('lenient')");

    FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());

    assertThat(
            TestDb.queryString(
                "SELECT string_agg(tgrelid::regclass::text || ' ' || pg_get_triggerdef(oid), '; '"
                    + " ORDER BY tgrelid::regclass::text) FROM pg_trigger"
                    + " WHERE tgname = 'fencing_truncate' AND tgrelid IN (?::regclass, ?::regclass)",
                app + ".v2_parted",
                app + ".v2_parted_1"))
        .contains(app + ".v2_parted ")
        .contains(app + ".v2_parted_1 ")
        .contains("enforce_fence_truncate('lenient')");
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = ?"
                    + " AND table_name IN ('v2_parted', 'v2_parted_1')"
                    + " AND column_name = 'fence_resource'",
                app))
        .isEqualTo(2);
  }
}
