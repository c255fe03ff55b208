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

  private static String resourceOf(String table, int id) {
    return TestDb.queryString(
        "SELECT fence_resource FROM " + app + "." + table + " WHERE id = " + id);
  }

  private static long rows(String table) {
    return TestDb.queryLong("SELECT count(*) FROM " + app + "." + table);
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

      // Later rows of the same transaction check the fence again (the lock is already theirs).
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

  @Test
  void shouldRefuseTruncateOfAStrictTableWithOrWithoutALease() {
    for (String lease : new String[] {null, "lease-42"}) {
      PSQLException e =
          lease == null
              ? rejected("TRUNCATE " + app + ".strict_t", null, null, null)
              : rejected("TRUNCATE " + app + ".strict_t", resource, 42L, lease);
      assertThat(e.getSQLState()).as("lease %s", lease).isEqualTo("ZF003");
      assertThat(e.getServerErrorMessage().getMessage()).contains("TRUNCATE");
      assertThat(e.getServerErrorMessage().getHint()).contains("DELETE");
    }
    assertThat(rows("strict_t")).isEqualTo(5);
  }

  @Test
  void shouldLetATokenlessTruncateThroughOnALenientTableButNotOneCarryingALease()
      throws SQLException {
    PSQLException e = rejected("TRUNCATE " + app + ".lenient_t", resource, 42L, "lease-42");
    assertThat(e.getSQLState()).isEqualTo("ZF003");
    assertThat(rows("lenient_t")).isEqualTo(5);

    write("TRUNCATE " + app + ".lenient_t", null, null, null);
    assertThat(rows("lenient_t")).isZero();
  }

  @Test
  void shouldLetTheCurrentHolderOfOneResourceRewriteRowsLastWrittenUnderAnother()
      throws SQLException {
    String x = resource + "-x";
    String y = resource + "-y";
    register(y, 1001, "lease-y1001");
    register(x, 1, "lease-x1");
    write(
        "UPDATE " + app + ".strict_t SET amount = 11 WHERE id IN (1, 2)", y, 1001L, "lease-y1001");
    assertThat(token("strict_t", 1)).isEqualTo(1001);
    assertThat(resourceOf("strict_t", 1)).isEqualTo(y);

    assertThat(write("UPDATE " + app + ".strict_t SET amount = 12 WHERE id = 1", x, 1L, "lease-x1"))
        .isEqualTo(1);
    assertThat(amount("strict_t", 1)).isEqualTo(12);
    assertThat(token("strict_t", 1)).isEqualTo(1);
    assertThat(resourceOf("strict_t", 1)).isEqualTo(x);
    assertThat(write("DELETE FROM " + app + ".strict_t WHERE id = 2", x, 1L, "lease-x1"))
        .isEqualTo(1);

    // Successors register for both resources: each one's old holder is rejected, on any row.
    register(x, 2, "lease-x2");
    register(y, 1002, "lease-y1002");
    PSQLException staleX =
        rejected("UPDATE " + app + ".strict_t SET amount = 13 WHERE id = 3", x, 1L, "lease-x1");
    assertThat(detail(staleX)).isEqualTo("resource=" + x + ";attempted=1;current=2");
    PSQLException staleY =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 13 WHERE id = 1", y, 1001L, "lease-y1001");
    assertThat(detail(staleY)).isEqualTo("resource=" + y + ";attempted=1001;current=1002");
    assertThat(amount("strict_t", 1)).isEqualTo(12);
    assertThat(amount("strict_t", 3)).isEqualTo(100);
  }

  @Test
  void shouldCompareTheRowTokenOnlyWithinTheWritersResourceOrOnLegacyRows() throws SQLException {
    TestDb.exec(
        "ALTER TABLE " + app + ".strict_t DISABLE TRIGGER fencing_enforce",
        "UPDATE "
            + app
            + ".strict_t SET fence_token = 50, fence_resource = '"
            + resource
            + "'"
            + " WHERE id = 5",
        "UPDATE " + app + ".strict_t SET fence_token = 50, fence_resource = 'another' WHERE id = 4",
        "UPDATE " + app + ".strict_t SET fence_token = 50, fence_resource = NULL WHERE id = 3",
        "ALTER TABLE " + app + ".strict_t ENABLE TRIGGER fencing_enforce");

    for (String sql :
        new String[] {
          "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 5",
          "DELETE FROM " + app + ".strict_t WHERE id = 5",
          "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 3",
          "DELETE FROM " + app + ".strict_t WHERE id = 3"
        }) {
      PSQLException e = rejected(sql, resource, 42L, "lease-42");
      assertThat(detail(e)).as(sql).isEqualTo("resource=" + resource + ";attempted=42;current=50");
    }
    assertThat(
            write(
                "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 4",
                resource,
                42L,
                "lease-42"))
        .isEqualTo(1);
    assertThat(resourceOf("strict_t", 4)).isEqualTo(resource);
    assertThat(token("strict_t", 4)).isEqualTo(42);
  }

  /**
   * A stale holder (41, 42 registered) forges the marker that the trigger of version 2 set after a
   * successful check, then writes row 1 of {@code table} and commits. Returns the error, or null if
   * the write committed.
   */
  private static SQLException staleWriteWithAForgedMarker(String table, String resource)
      throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, resource, 41L, "lease-41", true);
      try (PreparedStatement forge =
          c.prepareStatement(
              "SELECT set_config('fencing.verified', pg_current_xact_id()::text || ?, true)")) {
        forge.setString(
            1, "|" + fencing + "|" + resource.length() + ":" + resource + "/41/lease-41");
        forge.execute();
      }
      try {
        s.executeUpdate("UPDATE " + app + "." + table + " SET amount = 1 WHERE id = 1");
        c.commit();
        return null;
      } catch (SQLException e) {
        c.rollback();
        return e;
      }
    }
  }

  @Test
  void shouldRejectAStaleWriteCarryingAForgedVerifiedMarker() throws SQLException {
    SQLException e = staleWriteWithAForgedMarker("strict_t", resource);
    assertThat((Throwable) e).as("the stale write with a forged marker was accepted").isNotNull();
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(amount("strict_t", 1)).isEqualTo(100);

    assertThat((Throwable) staleWriteWithAForgedMarker("plain_t", resource))
        .as("without the trigger the same write lands")
        .isNull();
    assertThat(amount("plain_t", 1)).isEqualTo(1);
  }

  @Test
  void shouldKeepTheFenceColumnsWhenALenientWriteCarriesNoLease() throws SQLException {
    write(
        "UPDATE "
            + app
            + ".lenient_t SET amount = 1, fence_token = 9223372036854775807,"
            + " fence_resource = '"
            + resource
            + "' WHERE id = 1",
        null,
        null,
        null);
    assertThat(amount("lenient_t", 1)).isEqualTo(1);
    assertThat(token("lenient_t", 1)).as("poisoned token").isZero();
    assertThat(resourceOf("lenient_t", 1)).isNull();

    // The current holder still writes the row, and its stamp survives another lease-less write.
    assertThat(
            write(
                "UPDATE " + app + ".lenient_t SET amount = 2 WHERE id = 1",
                resource,
                42L,
                "lease-42"))
        .isEqualTo(1);
    write(
        "UPDATE "
            + app
            + ".lenient_t SET amount = 3, fence_token = 9223372036854775807,"
            + " fence_resource = 'elsewhere' WHERE id = 1",
        null,
        null,
        null);
    assertThat(amount("lenient_t", 1)).isEqualTo(3);
    assertThat(token("lenient_t", 1)).isEqualTo(42);
    assertThat(resourceOf("lenient_t", 1)).isEqualTo(resource);

    write(
        "INSERT INTO "
            + app
            + ".lenient_t (id, amount, fence_token, fence_resource)"
            + " VALUES (98, 1, 9223372036854775807, '"
            + resource
            + "')",
        null,
        null,
        null);
    assertThat(token("lenient_t", 98)).isZero();
    assertThat(resourceOf("lenient_t", 98)).isNull();
  }

  @Test
  void shouldKeepTheStampOfAGuardedStatementOnALenientTable() throws SQLException {
    // What a guarded statement writes without trigger mode: the current registration's token.
    write(
        "UPDATE "
            + app
            + ".lenient_t SET amount = 4, fence_token = 42, fence_resource = '"
            + resource
            + "' WHERE id = 4",
        null,
        null,
        null);
    write(
        "INSERT INTO "
            + app
            + ".lenient_t (id, amount, fence_token, fence_resource)"
            + " VALUES (97, 1, 42, '"
            + resource
            + "')",
        null,
        null,
        null);
    assertThat(token("lenient_t", 4)).isEqualTo(42);
    assertThat(resourceOf("lenient_t", 4)).isEqualTo(resource);
    assertThat(token("lenient_t", 97)).isEqualTo(42);
    assertThat(resourceOf("lenient_t", 97)).isEqualTo(resource);
  }

  @Test
  void shouldTellAJavaCallerHowToCarryTheLeaseWhenAStrictWriteHasNone() {
    PSQLException e =
        rejected("UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1", null, null, null);
    assertThat(e.getSQLState()).isEqualTo("ZF003");
    assertThat(e.getServerErrorMessage().getHint())
        .contains("FencedDataSource")
        .contains("FenceOptions")
        .contains("withTriggerMode(true)")
        .contains("guarded statements");
  }

  @Test
  void shouldNameTheFenceSchemaWhenNoHolderIsRegistered() {
    PSQLException e =
        rejected(
            "UPDATE " + app + ".strict_t SET amount = 1 WHERE id = 1", "nobody", 7L, "lease-7");
    assertThat(e.getServerErrorMessage().getHint())
        .contains("\"" + fencing + "\"")
        .contains("FenceOptions");
  }

  private static void registerWithoutWaiting(String resource, long token, String lease)
      throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      // A registration that had to wait would mean the writer still holds the fence row.
      s.execute("SET lock_timeout = '5s'");
      s.executeUpdate(
          "UPDATE "
              + fencing
              + ".fence SET token = "
              + token
              + ", lease_id = '"
              + lease
              + "' WHERE resource = '"
              + resource
              + "'");
    }
  }

  /**
   * The current holder (42) writes row 1 of {@code table} inside a savepoint and rolls it back; a
   * successor registers (43) without waiting; the old holder goes on, writes row 2 and commits.
   * Returns the error, or null if the write committed.
   */
  private SQLException staleWriteAfterARolledBackSavepoint(String table) throws SQLException {
    try (Connection c = TestDb.connect();
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      TestDb.setFencing(c, resource, 42L, "lease-42", true);
      var savepoint = c.setSavepoint();
      s.executeUpdate("UPDATE " + app + "." + table + " SET amount = 1 WHERE id = 1");
      c.rollback(savepoint); // releases the share lock taken inside the savepoint
      registerWithoutWaiting(resource, 43, "lease-43");
      try {
        s.executeUpdate("UPDATE " + app + "." + table + " SET amount = 2 WHERE id = 2");
        c.commit();
        return null;
      } catch (SQLException e) {
        c.rollback();
        return e;
      }
    }
  }

  @Test
  void shouldCheckTheFenceAgainAfterASavepointThatTookTheLockWasRolledBack() throws SQLException {
    SQLException e = staleWriteAfterARolledBackSavepoint("strict_t");
    assertThat((Throwable) e).as("stale write after the savepoint was accepted").isNotNull();
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(amount("strict_t", 2)).isEqualTo(100);
  }

  @Test
  void withoutTheTriggerTheStaleWriteAfterARolledBackSavepointLands() throws SQLException {
    assertThat((Throwable) staleWriteAfterARolledBackSavepoint("plain_t")).isNull();
    assertThat(amount("plain_t", 2)).isEqualTo(2);
  }

  @Test
  void shouldNotCommitAWriteWhoseSnapshotPredatesANewerRegistration() throws SQLException {
    for (int level :
        new int[] {Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE}) {
      String r = resource + "-iso" + level;
      register(r, 42, "lease-42");
      try (Connection c = TestDb.connect();
          Statement s = c.createStatement()) {
        c.setTransactionIsolation(level);
        c.setAutoCommit(false);
        TestDb.setFencing(c, r, 42L, "lease-42", true);
        s.executeQuery("SELECT count(*) FROM " + app + ".strict_t").close(); // takes the snapshot
        registerWithoutWaiting(r, 43, "lease-43");
        SQLException e =
            catchThrowableOfType(
                SQLException.class,
                () -> s.executeUpdate("UPDATE " + app + ".strict_t SET amount = 3 WHERE id = 3"));
        assertThat((Throwable) e).as("isolation %s", level).isNotNull();
        assertThat(e.getSQLState()).as("isolation %s", level).isIn("ZF001", "40001");
        c.rollback();
      }
    }
    assertThat(amount("strict_t", 3)).isEqualTo(100);
  }
}
