package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;

/** The fencing_enforce trigger, driven with raw JDBC and the fencing.* settings. */
class EnforcementTest {
  private static final TestDb db = new TestDb();
  private static String fencing;
  private static String app;
  private static int counter;
  private String resource;

  @BeforeAll
  static void setUp() {
    fencing = db.newSchema("enf_fz");
    app = db.createSchema("enf_app");
    for (String t : new String[] {"strict_t", "lenient_t", "plain_t"}) {
      TestDb.exec("CREATE TABLE " + app + "." + t + " (id int PRIMARY KEY, amount int NOT NULL)");
    }
    FencingMigrations.migrate(
        TestDb.dataSource(),
        MigrationOptions.builder()
            .schema(fencing)
            .fence(app + ".plain_t")
            .enforce(app + ".strict_t", EnforcementMode.STRICT)
            .enforce(app + ".lenient_t", EnforcementMode.LENIENT)
            .build());
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  @BeforeEach
  void resetRows() throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      for (String t : new String[] {"strict_t", "lenient_t", "plain_t"}) {
        s.execute("ALTER TABLE " + app + "." + t + " DISABLE TRIGGER USER");
        s.execute("DELETE FROM " + app + "." + t);
        s.execute(
            "INSERT INTO "
                + app
                + "."
                + t
                + " (id, amount) SELECT g, 100 FROM generate_series(1, 5) g");
        s.execute("ALTER TABLE " + app + "." + t + " ENABLE TRIGGER USER");
      }
    }
    resource = "billing-" + (++counter);
    register(resource, 42, "lease-42");
  }

  private static void register(String resource, long token, String lease) throws SQLException {
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
      ps.executeUpdate();
    }
  }

  /** Runs sql in one transaction whose transaction-local settings carry the given registration. */
  private static int write(String sql, String resource, Long token, String lease)
      throws SQLException {
    try (Connection c = TestDb.connect()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, resource, token, lease, true);
      try (Statement s = c.createStatement()) {
        int n = s.executeUpdate(sql);
        c.commit();
        return n;
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
    }
  }

  private static PSQLException rejected(String sql, String resource, Long token, String lease) {
    PSQLException e =
        catchThrowableOfType(PSQLException.class, () -> write(sql, resource, token, lease));
    if (e == null) {
      throw new AssertionError("expected the write to be rejected: " + sql);
    }
    return e;
  }

  private static String detail(PSQLException e) {
    return e.getServerErrorMessage() == null ? null : e.getServerErrorMessage().getDetail();
  }

  private static long amount(String table, int id) {
    return TestDb.queryLong("SELECT amount FROM " + app + "." + table + " WHERE id = " + id);
  }

  private static long token(String table, int id) {
    return TestDb.queryLong("SELECT fence_token FROM " + app + "." + table + " WHERE id = " + id);
  }

  @Test
  void shouldRejectUpdateCarryingAStaleToken() {
    PSQLException e =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1", resource, 41L, "lease-41");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(detail(e)).isEqualTo("resource=" + resource + ";attempted=41;current=42");
    assertThat(e.getServerErrorMessage().getMessage())
        .isEqualTo(
            "stale fencing token for resource \"" + resource + "\": attempted 41, current 42");
    assertThat(amount("strict_t", 1)).isEqualTo(100);
  }

  @Test
  void shouldLetTheSameStaleWriteThroughOnATableWithoutEnforcement() throws SQLException {
    int n =
        write("UPDATE " + app + ".plain_t SET amount = 1 WHERE id = 1", resource, 41L, "lease-41");
    assertThat(n).isEqualTo(1);
    assertThat(amount("plain_t", 1)).isEqualTo(1);
  }

  @Test
  void shouldRejectTheCurrentTokenCarriedByAnotherLease() {
    PSQLException e =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1", resource, 42L, "lease-dup");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(detail(e)).isEqualTo("resource=" + resource + ";attempted=42;current=42");
    assertThat(e.getServerErrorMessage().getHint()).contains("another lease");
  }

  @Test
  void shouldRejectAWriteForAResourceWithoutRegistration() {
    PSQLException e =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1", "nobody", 7L, "lease-7");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(detail(e)).isEqualTo("resource=nobody;attempted=7;current=0");
  }

  @Test
  void shouldAcceptTheCurrentRegistrationAndStampTheToken() throws SQLException {
    int n = write("UPDATE " + app + ".strict_t SET amount = 7", resource, 42L, "lease-42");
    assertThat(n).isEqualTo(5);
    assertThat(amount("strict_t", 3)).isEqualTo(7);
    assertThat(TestDb.queryLong("SELECT min(fence_token) FROM " + app + ".strict_t")).isEqualTo(42);
  }

  @Test
  void shouldWorkWithSessionLevelSettingsInAutocommit() throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      TestDb.setFencing(c, resource, 42L, "lease-42", false);
      assertThat(s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 8 WHERE id = 2"))
          .isEqualTo(1);
      assertThat(s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 9 WHERE id = 3"))
          .isEqualTo(1);
      // A newer holder registers between two autocommit statements of the old one.
      register(resource, 43, "lease-43");
      SQLException e =
          catchThrowableOfType(
              SQLException.class,
              () -> s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 10 WHERE id = 4"));
      assertThat(e instanceof PSQLException).isTrue();
      assertThat(e.getSQLState()).isEqualTo("ZF001");
      assertThat(detail((PSQLException) e))
          .isEqualTo("resource=" + resource + ";attempted=42;current=43");
    }
    assertThat(amount("strict_t", 2)).isEqualTo(8);
    assertThat(token("strict_t", 2)).isEqualTo(42);
    assertThat(amount("strict_t", 4)).isEqualTo(100);
  }

  @Test
  void shouldRecheckWhenTheSettingsChangeInsideATransaction() throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, resource, 42L, "lease-42", true);
      assertThat(s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1"))
          .isEqualTo(1);
      TestDb.setFencing(c, resource, 41L, "lease-41", true);
      SQLException e =
          catchThrowableOfType(
              SQLException.class,
              () -> s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 2 WHERE id = 2"));
      assertThat(e.getSQLState()).isEqualTo("ZF001");
      c.rollback();
    }
  }

  @Test
  void shouldHoldTheFenceShareLockUntilCommitSoARegistrationWaits() throws SQLException {
    try (Connection writer = TestDb.connect();
        Connection registrar = TestDb.connect();
        Statement w = writer.createStatement();
        Statement r = registrar.createStatement()) {
      writer.setAutoCommit(false);
      TestDb.setFencing(writer, resource, 42L, "lease-42", true);
      w.executeUpdate("UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1");

      registrar.setAutoCommit(false);
      r.execute("SET LOCAL lock_timeout = '300ms'");
      SQLException blocked =
          catchThrowableOfType(
              SQLException.class,
              () ->
                  r.executeUpdate(
                      "UPDATE "
                          + fencing
                          + ".fence SET token = 43, lease_id = 'lease-43'"
                          + " WHERE resource = '"
                          + resource
                          + "'"));
      assertThat(blocked.getSQLState()).isEqualTo("55P03");
      registrar.rollback();

      // Later rows of the same transaction skip the lookup and still land.
      w.executeUpdate("UPDATE " + app + ".strict_t SET amount = 2 WHERE id = 2");
      writer.commit();

      registrar.setAutoCommit(true);
      assertThat(
              r.executeUpdate(
                  "UPDATE "
                      + fencing
                      + ".fence SET token = 43, lease_id = 'lease-43'"
                      + " WHERE resource = '"
                      + resource
                      + "'"))
          .isEqualTo(1);
    }
    PSQLException e =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 3 WHERE id = 3", resource, 42L, "lease-42");
    assertThat(detail(e)).isEqualTo("resource=" + resource + ";attempted=42;current=43");
  }

  @Test
  void shouldRejectATokenlessWriteInStrictMode() {
    for (String sql :
        new String[] {
          "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1",
          "INSERT INTO " + app + ".strict_t (id, amount) VALUES (99, 1)",
          "DELETE FROM " + app + ".strict_t WHERE id = 1"
        }) {
      PSQLException e = rejected(sql, null, null, null);
      assertThat(e.getSQLState()).as(sql).isEqualTo("ZF003");
      assertThat(e.getMessage()).contains("without a fencing token");
    }
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".strict_t")).isEqualTo(5);
  }

  @Test
  void shouldLetATokenlessWriteThroughUntouchedInLenientMode() throws SQLException {
    assertThat(write("UPDATE " + app + ".lenient_t SET amount = 1 WHERE id = 1", null, null, null))
        .isEqualTo(1);
    assertThat(
            write(
                "INSERT INTO " + app + ".lenient_t (id, amount) VALUES (99, 1)", null, null, null))
        .isEqualTo(1);
    assertThat(write("DELETE FROM " + app + ".lenient_t WHERE id = 2", null, null, null))
        .isEqualTo(1);
    assertThat(amount("lenient_t", 1)).isEqualTo(1);
    assertThat(token("lenient_t", 1)).isZero();
    assertThat(token("lenient_t", 99)).isZero();
  }

  @Test
  void shouldStillCheckAWriteCarryingATokenInLenientMode() {
    PSQLException e =
        rejected(
            "UPDATE " + app + ".lenient_t SET amount = 1 WHERE id = 1", resource, 41L, "lease-41");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
  }

  @Test
  void shouldRejectAStaleInsertAndStampACurrentOne() throws SQLException {
    PSQLException e =
        rejected(
            "INSERT INTO " + app + ".strict_t (id, amount) VALUES (10, 1)",
            resource,
            41L,
            "lease-41");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(detail(e)).isEqualTo("resource=" + resource + ";attempted=41;current=42");
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".strict_t WHERE id = 10"))
        .isZero();

    write(
        "INSERT INTO " + app + ".strict_t (id, amount, fence_token) VALUES (10, 1, 999)",
        resource,
        42L,
        "lease-42");
    assertThat(token("strict_t", 10)).isEqualTo(42);
  }

  @Test
  void shouldRejectAStaleDeleteAndAcceptACurrentOne() throws SQLException {
    PSQLException e =
        rejected("DELETE FROM " + app + ".strict_t WHERE id = 1", resource, 41L, "lease-41");
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".strict_t WHERE id = 1"))
        .isEqualTo(1);

    assertThat(write("DELETE FROM " + app + ".strict_t WHERE id = 1", resource, 42L, "lease-42"))
        .isEqualTo(1);
  }

  @Test
  void shouldRejectARowWrittenWithANewerTokenEvenWhenTheFencePasses() throws SQLException {
    TestDb.exec(
        "ALTER TABLE " + app + ".strict_t DISABLE TRIGGER fencing_enforce",
        "UPDATE " + app + ".strict_t SET fence_token = 50 WHERE id = 5",
        "ALTER TABLE " + app + ".strict_t ENABLE TRIGGER fencing_enforce");

    PSQLException update =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 5", resource, 42L, "lease-42");
    assertThat(update.getSQLState()).isEqualTo("ZF001");
    assertThat(detail(update)).isEqualTo("resource=" + resource + ";attempted=42;current=50");

    PSQLException delete =
        rejected("DELETE FROM " + app + ".strict_t WHERE id = 5", resource, 42L, "lease-42");
    assertThat(delete.getSQLState()).isEqualTo("ZF001");
    assertThat(amount("strict_t", 5)).isEqualTo(100);
  }

  @Test
  void shouldRejectATokenWithoutResourceOrLease() {
    PSQLException e =
        rejected("UPDATE " + app + ".lenient_t SET amount = 1 WHERE id = 1", null, 42L, null);
    assertThat(e.getSQLState()).isEqualTo("ZF003");
  }
}
