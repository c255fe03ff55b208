package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FenceTableTest {
  private static final TestDb db = new TestDb();
  private static String fencing;

  @BeforeAll
  static void setUp() {
    fencing = db.newSchema("fence_fz");
    FencingMigrations.migrate(
        TestDb.dataSource(), MigrationOptions.builder().schema(fencing).build());
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  /** The registration statement fencing-jdbc runs; returns the rows affected. */
  private static int register(String resource, long token, String lease) throws SQLException {
    try (Connection c = TestDb.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + fencing
                    + ".fence AS fence (resource, token, lease_id) VALUES (?, ?, ?)"
                    + " ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token,"
                    + " lease_id = EXCLUDED.lease_id, registered_at = now()"
                    + " WHERE fence.token < EXCLUDED.token")) {
      ps.setString(1, resource);
      ps.setLong(2, token);
      ps.setString(3, lease);
      return ps.executeUpdate();
    }
  }

  private static SQLException failing(String sql) {
    SQLException e =
        catchThrowableOfType(
            SQLException.class,
            () -> {
              try (Connection c = TestDb.connect();
                  Statement s = c.createStatement()) {
                s.execute(sql);
              }
            });
    if (e == null) {
      throw new AssertionError("expected the database to refuse: " + sql);
    }
    return e;
  }

  @Test
  void shouldRegisterOnlyStrictlyGreaterTokens() throws SQLException {
    assertThat(register("r-up", 5, "lease-5")).isEqualTo(1);
    assertThat(register("r-up", 6, "lease-6")).isEqualTo(1);
    assertThat(register("r-up", 6, "lease-other")).isZero();
    assertThat(register("r-up", 3, "lease-3")).isZero();
    assertThat(
            TestDb.queryString(
                "SELECT token || '/' || lease_id FROM "
                    + fencing
                    + ".fence WHERE resource = 'r-up'"))
        .isEqualTo("6/lease-6");
  }

  @Test
  void shouldRefuseToLowerTheFence() throws SQLException {
    register("r-low", 42, "lease-42");
    SQLException e =
        failing("UPDATE " + fencing + ".fence SET token = 41 WHERE resource = 'r-low'");
    assertThat(e.getSQLState()).isEqualTo("ZF002");
    assertThat(e.getMessage()).contains("cannot go backwards").contains("r-low");
    assertThat(TestDb.queryLong("SELECT token FROM " + fencing + ".fence WHERE resource = 'r-low'"))
        .isEqualTo(42);
  }

  @Test
  void shouldRefuseToHandTheSameTokenToAnotherLease() throws SQLException {
    register("r-same", 42, "lease-42");
    SQLException e =
        failing("UPDATE " + fencing + ".fence SET lease_id = 'intruder' WHERE resource = 'r-same'");
    assertThat(e.getSQLState()).isEqualTo("ZF002");
  }

  @Test
  void shouldRefuseToDeleteAFenceRow() throws SQLException {
    register("r-del", 42, "lease-42");
    SQLException e = failing("DELETE FROM " + fencing + ".fence WHERE resource = 'r-del'");
    assertThat(e.getSQLState()).isEqualTo("ZF002");
    assertThat(
            TestDb.queryLong("SELECT count(*) FROM " + fencing + ".fence WHERE resource = 'r-del'"))
        .isEqualTo(1);
  }

  @Test
  void shouldRefuseToTruncateTheFence() throws SQLException {
    register("r-trunc", 1, "lease-1");
    SQLException e = failing("TRUNCATE " + fencing + ".fence");
    assertThat(e.getSQLState()).isEqualTo("ZF002");
  }

  @Test
  void shouldRefuseNonPositiveTokens() {
    SQLException e =
        failing(
            "INSERT INTO " + fencing + ".fence (resource, token, lease_id) VALUES ('z', 0, 'l')");
    assertThat(e.getSQLState()).isEqualTo("23514");
  }
}
