package dev.fencing.it;

import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * PostgreSQL as the chaos run's database: {@link ChaosSchema}'s tables and deferred judge, the
 * fence through the migrations, {@code pg_terminate_backend} of a worker's backends (found by
 * {@code application_name}).
 */
class PostgresChaos implements ChaosDatabase {

  static final String JDBC =
      System.getProperty(
          "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  static final PostgresChaos INSTANCE = new PostgresChaos(JDBC);

  private final String jdbc;

  /** PostgreSQL at {@code jdbc} (the administrator's URL, also the workers'). */
  PostgresChaos(String jdbc) {
    this.jdbc = jdbc;
  }

  @Override
  public String name() {
    return "postgres";
  }

  @Override
  public String jdbc() {
    return jdbc;
  }

  @Override
  public void requireReachable() {
    try (Connection c = DriverManager.getConnection(jdbc)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + jdbc
              + " ("
              + e.getMessage()
              + "); start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql)"
              + " main start (or point -Dfencing.test.jdbc at another server)",
          e);
    }
  }

  @Override
  public String schemaName(String suffix) {
    return "it_" + suffix;
  }

  @Override
  public String fenceSchemaName(String suffix) {
    return "itf_" + suffix;
  }

  @Override
  public void create(Connection admin, String schema, int resources) throws SQLException {
    ChaosSchema.create(admin, schema, resources);
  }

  @Override
  public void installFence(String s, String fenceSchema, String mode) throws SQLException {
    MigrationOptions.Builder options = MigrationOptions.builder().schema(fenceSchema);
    for (String table : ChaosSchema.FENCED_TABLES) {
      options.fence(s + "." + table);
      if (mode.equals("trigger")) {
        options.enforce(s + "." + table, EnforcementMode.STRICT);
      }
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(jdbc);
    FencingMigrations.migrate((DataSource) ds, options.build());
    try (Connection c = DriverManager.getConnection(jdbc);
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE FUNCTION "
              + s
              + ".log_registration() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
              + " INSERT INTO "
              + s
              + ".registrations (resource, token, lease_id)"
              + " VALUES (NEW.resource, NEW.token, NEW.lease_id); RETURN NEW; END $$");
      st.execute(
          "CREATE TRIGGER zz_log_registration AFTER INSERT OR UPDATE ON "
              + fenceSchema
              + ".fence FOR EACH ROW EXECUTE FUNCTION "
              + s
              + ".log_registration()");
    }
  }

  @Override
  public String workerJdbc(String appName, String schema, String fenceSchema) {
    return jdbc;
  }

  @Override
  public Map<String, String> workerPoolProperties(String appName) {
    return Map.of("ApplicationName", appName);
  }

  @Override
  public String endConnections(String appName) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbc);
        PreparedStatement s =
            c.prepareStatement(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    + " WHERE application_name = ?")) {
      s.setString(1, appName);
      s.execute();
    }
    return "pg_terminate_backend";
  }

  @Override
  public void cleanUp(String suffix, String schema, String fenceSchema, boolean keep)
      throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbc);
        Statement st = c.createStatement()) {
      st.execute(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE"
              + " 'fencing-it-"
              + suffix
              + "-%'");
      if (!keep) {
        st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        st.execute("DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
      }
    }
  }

  @Override
  public String ofCurrentEpoch(String fenceSchema) {
    return " AND epoch = " + fenceSchema + ".fence_epoch()";
  }

  @Override
  public String plainItemUpsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".items (resource, item, token, lease_id, attempt) VALUES (?, ?, ?, ?, ?)"
        + " ON CONFLICT (resource, item) DO UPDATE SET token = EXCLUDED.token,"
        + " lease_id = EXCLUDED.lease_id, attempt = EXCLUDED.attempt";
  }

  @Override
  public String plainSharedUpsert(String schema) {
    return "INSERT INTO "
        + schema
        + ".shared (item, resource, token, lease_id, attempt) VALUES (?, ?, ?, ?, ?)"
        + " ON CONFLICT (item) DO UPDATE SET resource = EXCLUDED.resource,"
        + " token = EXCLUDED.token, lease_id = EXCLUDED.lease_id, attempt = EXCLUDED.attempt";
  }

  @Override
  public boolean upsertWroteItsRow(int count) {
    return count == 1;
  }

  @Override
  public void beforeCommit(Connection c, String schema) {
    // the deferred constraint trigger judges the write at commit
  }

  @Override
  public Map<String, String> recorderChecks(String schema) {
    return Map.of();
  }
}
