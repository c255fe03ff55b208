package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the enforcement trigger costs on a bulk update. Prints figures; asserts no timing. */
class TriggerCostTest {
  private static final TestDb db = new TestDb();
  private static final int ROWS = 100_000;
  private static final int RUNS = 5;
  private static String fencing;
  private static String app;

  @BeforeAll
  static void setUp() {
    fencing = db.newSchema("cost_fz");
    app = db.createSchema("cost_app");
    for (String t : new String[] {"with_trigger", "without_trigger"}) {
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
              "with_trigger".equals(table)
                  ? "UPDATE " + app + "." + table + " SET amount = amount + 1"
                  : "UPDATE " + app + "." + table + " SET amount = amount + 1, fence_token = 42");
      c.commit();
      long elapsed = System.nanoTime() - start;
      assertThat(n).isEqualTo(ROWS);
      return elapsed;
    }
  }

  @Test
  void shouldMeasureTheTriggerCostOfABulkUpdate() throws SQLException {
    long[] with = new long[RUNS];
    long[] without = new long[RUNS];
    bulkUpdate("with_trigger"); // warm up
    bulkUpdate("without_trigger");
    for (int i = 0; i < RUNS; i++) {
      without[i] = bulkUpdate("without_trigger");
      with[i] = bulkUpdate("with_trigger");
    }
    Arrays.sort(with);
    Arrays.sort(without);
    double withMs = with[RUNS / 2] / 1e6;
    double withoutMs = without[RUNS / 2] / 1e6;
    System.out.printf(
        "[measure] bulk UPDATE of %,d rows (median of %d): without trigger %.1f ms,"
            + " with fencing_enforce trigger %.1f ms, ratio %.2fx%n",
        ROWS, RUNS, withoutMs, withMs, withMs / withoutMs);

    assertThat(TestDb.queryLong("SELECT min(fence_token) FROM " + app + ".with_trigger"))
        .isEqualTo(42);
    assertThat(TestDb.queryLong("SELECT min(amount) FROM " + app + ".with_trigger"))
        .isEqualTo(RUNS + 1);
  }
}
