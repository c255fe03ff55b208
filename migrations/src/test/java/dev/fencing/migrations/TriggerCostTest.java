package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the enforcement trigger costs on a bulk update, against the same update without a trigger
 * and with the trigger of version 2 (which skipped the fence lookup after the first row, trusting a
 * per-transaction marker that anyone could forge). Prints figures; asserts no timing.
 */
class TriggerCostTest {
  private static final TestDb db = new TestDb();
  private static final int ROWS = 50_000;
  private static final int RUNS = 5;
  private static String fencing;
  private static String fencingV2;
  private static String app;

  @BeforeAll
  static void setUp() {
    fencing = db.newSchema("cost_fz");
    app = db.createSchema("cost_app");
    for (String t : new String[] {"with_trigger", "without_trigger", "with_v2_trigger"}) {
      TestDb.exec(
          "CREATE TABLE " + app + "." + t + " (id int PRIMARY KEY, amount bigint NOT NULL)",
          "INSERT INTO " + app + "." + t + " SELECT g, 0 FROM generate_series(1, " + ROWS + ") g",
          "VACUUM ANALYZE " + app + "." + t);
    }
    FencingMigrations.migrate(
        TestDb.dataSource(),
        MigrationOptions.builder()
            .schema(fencing)
            .fence(app + ".without_trigger")
            .enforce(app + ".with_trigger", EnforcementMode.STRICT)
            .build());
    TestDb.exec(
        "INSERT INTO "
            + fencing
            + ".fence (resource, token, lease_id) VALUES ('bulk', 42, 'lease-42')");
    // The same table shape under a fence schema migrated to version 2 only, with its trigger.
    fencingV2 = db.newSchema("cost_fz2");
    FencingMigrations.flywayConfiguration(TestDb.dataSource(), fencingV2)
        .target("2")
        .load()
        .migrate();
    TestDb.exec(
        "ALTER TABLE " + app + ".with_v2_trigger ADD COLUMN fence_token bigint NOT NULL DEFAULT 0",
        "CREATE TRIGGER fencing_enforce BEFORE INSERT OR UPDATE OR DELETE ON "
            + app
            + ".with_v2_trigger FOR EACH ROW EXECUTE FUNCTION "
            + fencingV2
            + ".enforce_fence('strict')",
        "INSERT INTO "
            + fencingV2
            + ".fence (resource, token, lease_id) VALUES ('bulk', 42, 'lease-42')");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  /** One bulk update of all rows in its own transaction; returns elapsed nanoseconds. */
  private static long bulkUpdate(String table) throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, "bulk", 42L, "lease-42", true);
      long start = System.nanoTime();
      // Same work on both tables: the plain one sets fence_token itself, as the row guard does.
      int n =
          s.executeUpdate(
              "without_trigger".equals(table)
                  ? "UPDATE "
                      + app
                      + "."
                      + table
                      + " SET amount = amount + 1, fence_token = 42, fence_resource = 'bulk'"
                  : "UPDATE " + app + "." + table + " SET amount = amount + 1");
      c.commit();
      long elapsed = System.nanoTime() - start;
      assertThat(n).isEqualTo(ROWS);
      return elapsed;
    }
  }

  @Test
  void shouldMeasureTheTriggerCostOfABulkUpdate() throws SQLException {
    String[] tables = {"without_trigger", "with_trigger", "with_v2_trigger"};
    long[][] nanos = new long[tables.length][RUNS];
    for (String table : tables) {
      bulkUpdate(table); // warm up
    }
    for (int i = 0; i < RUNS; i++) {
      for (int t = 0; t < tables.length; t++) {
        nanos[t][i] = bulkUpdate(tables[t]);
      }
    }
    double[] medianMs = new double[tables.length];
    for (int t = 0; t < tables.length; t++) {
      Arrays.sort(nanos[t]);
      medianMs[t] = nanos[t][RUNS / 2] / 1e6;
    }
    System.out.printf(
        "[measure] bulk UPDATE of %,d rows (median of %d): without trigger %.1f ms;"
            + " fencing_enforce (fence checked per row) %.1f ms, ratio %.2fx, %.2f us/row;"
            + " version 2's trigger (checked once, forgeable marker) %.1f ms, ratio %.2fx,"
            + " %.2f us/row%n",
        ROWS,
        RUNS,
        medianMs[0],
        medianMs[1],
        medianMs[1] / medianMs[0],
        (medianMs[1] - medianMs[0]) * 1000 / ROWS,
        medianMs[2],
        medianMs[2] / medianMs[0],
        (medianMs[2] - medianMs[0]) * 1000 / ROWS);

    assertThat(TestDb.queryLong("SELECT min(fence_token) FROM " + app + ".with_trigger"))
        .isEqualTo(42);
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM "
                    + app
                    + ".with_trigger"
                    + " WHERE fence_resource IS DISTINCT FROM 'bulk'"))
        .isZero();
    assertThat(TestDb.queryLong("SELECT min(amount) FROM " + app + ".with_trigger"))
        .isEqualTo(RUNS + 1);
  }
}
