package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The grants the README's threat model recommends, on real login roles: the application role that
 * holds leases may read and register in the fence; every other role that writes fenced tables gets
 * no privilege on the fence schema, so it can neither read lease ids nor switch enforcement off,
 * and its writes are still checked by the (security definer) trigger.
 */
class PrivilegesTest {
  private static final TestDb db = new TestDb();
  private static final String SUFFIX =
      UUID.randomUUID().toString().replace("-", "").substring(0, 8).toLowerCase(Locale.ROOT);
  private static final String APP_ROLE = "fz_app_" + SUFFIX;
  private static final String RAW_ROLE = "fz_raw_" + SUFFIX;
  private static String fencing;
  private static String app;
  private static String raw;
  private static int counter;
  private String resource;

  @BeforeAll
  static void setUp() {
    fencing = db.newSchema("priv_fz");
    app = db.createSchema("priv_app");
    raw = db.createSchema("priv_raw");
    TestDb.exec("CREATE TABLE " + app + ".ledger (id int PRIMARY KEY, amount int NOT NULL)");
    FencingMigrations.migrate(
        TestDb.dataSource(),
        MigrationOptions.builder()
            .schema(fencing)
            .enforce(app + ".ledger", EnforcementMode.STRICT)
            .build());
    TestDb.exec(
        "CREATE ROLE " + APP_ROLE + " LOGIN",
        "CREATE ROLE " + RAW_ROLE + " LOGIN",
        // both write the fenced table
        "GRANT USAGE ON SCHEMA " + app + " TO " + APP_ROLE + ", " + RAW_ROLE,
        "GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON "
            + app
            + ".ledger TO "
            + APP_ROLE
            + ", "
            + RAW_ROLE,
        // only the lease holders' role may read and register in the fence
        "GRANT USAGE ON SCHEMA " + fencing + " TO " + APP_ROLE,
        "GRANT SELECT, INSERT, UPDATE ON " + fencing + ".fence TO " + APP_ROLE,
        // a schema of its own where the raw role may create objects (to try a search_path attack)
        "GRANT USAGE, CREATE ON SCHEMA " + raw + " TO " + RAW_ROLE);
  }

  @AfterAll
  static void tearDown() {
    try {
      db.close();
    } finally {
      TestDb.exec(
          "DROP OWNED BY " + APP_ROLE + ", " + RAW_ROLE,
          "DROP ROLE " + APP_ROLE,
          "DROP ROLE " + RAW_ROLE);
    }
  }

  @BeforeEach
  void registerAHolder() throws SQLException {
    TestDb.exec(
        "ALTER TABLE " + app + ".ledger DISABLE TRIGGER USER",
        "DELETE FROM " + app + ".ledger",
        "INSERT INTO " + app + ".ledger (id, amount) SELECT g, 100 FROM generate_series(1, 3) g",
        "ALTER TABLE " + app + ".ledger ENABLE TRIGGER USER");
    resource = "priv-" + (++counter);
    try (Connection c = as(APP_ROLE);
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO "
                    + fencing
                    + ".fence AS fence (resource, token, lease_id) VALUES (?, ?, ?)"
                    + " ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token,"
                    + " lease_id = EXCLUDED.lease_id WHERE fence.token < EXCLUDED.token")) {
      for (long token = 1; token <= 2; token++) {
        ps.setString(1, resource);
        ps.setLong(2, token);
        ps.setString(3, "lease-" + token);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
    }
  }

  private static Connection as(String role) throws SQLException {
    String url = TestDb.URL.replaceAll("([?&])user=[^&]*&?", "$1");
    url += (url.contains("?") ? (url.endsWith("?") || url.endsWith("&") ? "" : "&") : "?");
    return DriverManager.getConnection(url + "user=" + role);
  }

  private static SQLException failing(String role, String... sql) {
    SQLException e =
        catchThrowableOfType(
            SQLException.class,
            () -> {
              try (Connection c = as(role);
                  Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                for (String q : sql) {
                  s.execute(q);
                }
                c.commit();
              }
            });
    if (e == null) {
      throw new AssertionError("expected " + role + " to be refused: " + String.join("; ", sql));
    }
    return e;
  }

  private static void succeeding(String role, String... sql) throws SQLException {
    try (Connection c = as(role);
        Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      for (String q : sql) {
        s.execute(q);
      }
      c.commit();
    }
  }

  private String settings(long token, String lease) {
    return "SELECT set_config('fencing.resource', '"
        + resource
        + "', true), set_config('fencing.token', '"
        + token
        + "', true), set_config('fencing.lease_id', '"
        + lease
        + "', true)";
  }

  private String update(int id, int amount) {
    return "UPDATE " + app + ".ledger SET amount = " + amount + " WHERE id = " + id;
  }

  private static long amount(int id) {
    return TestDb.queryLong("SELECT amount FROM " + app + ".ledger WHERE id = " + id);
  }

  @Test
  void shouldKeepLeaseIdsFromARoleWithoutFencePrivileges() {
    SQLException e = failing(RAW_ROLE, "SELECT lease_id FROM " + fencing + ".fence");
    assertThat(e.getSQLState()).isEqualTo("42501");
  }

  @Test
  void shouldCheckTheWritesOfARoleThatCannotReadTheFence() throws SQLException {
    SQLException stale = failing(RAW_ROLE, settings(1, "lease-1"), update(1, 1));
    assertThat(stale.getSQLState()).isEqualTo("ZF001");
    SQLException none = failing(RAW_ROLE, update(1, 1));
    assertThat(none.getSQLState()).isEqualTo("ZF003");
    assertThat(amount(1)).isEqualTo(100);

    // The check is against the fence, not a blanket refusal: the current registration passes.
    succeeding(RAW_ROLE, settings(2, "lease-2"), update(1, 2));
    assertThat(amount(1)).isEqualTo(2);
  }

  @Test
  void shouldKeepARoleThatIsNotTheOwnerFromSwitchingEnforcementOff() {
    assertThat(failing(RAW_ROLE, "SET session_replication_role = replica").getSQLState())
        .isEqualTo("42501");
    assertThat(
            failing(RAW_ROLE, "ALTER TABLE " + app + ".ledger DISABLE TRIGGER fencing_enforce")
                .getSQLState())
        .isEqualTo("42501");
    assertThat(failing(RAW_ROLE, "TRUNCATE " + app + ".ledger").getSQLState()).isEqualTo("ZF003");
    assertThat(failing(RAW_ROLE, "UPDATE " + fencing + ".fence SET token = 3").getSQLState())
        .isEqualTo("42501");
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".ledger")).isEqualTo(3);
  }

  @Test
  void shouldNotRunTheCallersFunctionsWithTheTriggerOwnersRights() throws SQLException {
    succeeding(
        RAW_ROLE,
        "CREATE TABLE " + raw + ".calls (who text)",
        "CREATE FUNCTION "
            + raw
            + ".current_setting(text, boolean) RETURNS text"
            + " LANGUAGE sql AS $$ INSERT INTO "
            + raw
            + ".calls VALUES (current_user)"
            + " RETURNING NULL::text $$");
    SQLException e =
        failing(
            RAW_ROLE,
            settings(1, "lease-1"),
            "SET search_path = " + raw + ", pg_catalog",
            update(2, 1));
    assertThat(e.getSQLState()).isEqualTo("ZF001");
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + raw + ".calls")).isZero();
    assertThat(
            TestDb.queryString(
                "SELECT array_to_string(proconfig, ',') FROM pg_proc"
                    + " WHERE oid = ?::regprocedure",
                fencing + ".enforce_fence()"))
        .isEqualTo("search_path=pg_catalog, pg_temp");
  }

  @Test
  void shouldLetTheApplicationRoleWriteWithTheTriggerAndWithAGuardedStatement()
      throws SQLException {
    succeeding(APP_ROLE, settings(2, "lease-2"), update(3, 3));
    assertThat(amount(3)).isEqualTo(3);
    // A guarded statement's fused fence check reads the fence FOR SHARE: SELECT and UPDATE on it.
    succeeding(
        APP_ROLE,
        settings(2, "lease-2"),
        "UPDATE "
            + app
            + ".ledger SET amount = 4, fence_token = 2, fence_resource = '"
            + resource
            + "' WHERE id = 3 AND EXISTS (SELECT 1 FROM "
            + fencing
            + ".fence f"
            + " WHERE f.resource = '"
            + resource
            + "' AND f.token = 2 AND f.lease_id = 'lease-2' FOR SHARE OF f)");
    assertThat(amount(3)).isEqualTo(4);
  }
}
