package dev.fencing.migrations;

import dev.fencing.migrations.internal.FlywaySupport;
import dev.fencing.migrations.internal.MariaDbMigrator;
import dev.fencing.migrations.internal.TableMigrator;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Entry point: applies the fencing schema's own migrations, then adds the {@code fence_token}
 * column to the fenced tables and installs the {@code fencing_enforce} trigger on the enforced
 * ones, each DDL statement in its own short transaction under {@code lock_timeout}, retried on lock
 * timeouts up to the configured bound. Safe to re-run: what is already in place is left alone.
 */
public final class FencingMigrations {
  /** Default schema for the fencing objects. */
  public static final String DEFAULT_SCHEMA = FenceSchema.DEFAULT_SCHEMA;

  /** Flyway history table of the fencing migrations (inside the fencing schema). */
  public static final String HISTORY_TABLE = "fencing_schema_history";

  /** Flyway location of the fencing migrations. */
  public static final String LOCATION = "classpath:db/fencing";

  /** Name of the Flyway placeholder holding the fencing schema. */
  public static final String SCHEMA_PLACEHOLDER = "fencingSchema";

  private FencingMigrations() {}

  /**
   * Runs the migrations.
   *
   * @param dataSource connections to the target PostgreSQL database (14 or newer)
   * @param options what to do
   * @return what was done
   * @throws LockNotAcquiredException if a table could not be locked within the bound
   * @throws FencingMigrationException if Flyway's module for the database ({@code
   *     flyway-database-postgresql} or {@code flyway-mysql}) is not on the class path, Flyway or a
   *     statement failed, a table does not exist, an existing {@code fence_token} column is not
   *     {@code bigint NOT NULL}, or the schema already holds tables or functions but no {@value
   *     #HISTORY_TABLE} table (someone else's schema)
   * @throws NullPointerException if an argument is null
   */
  public static MigrationReport migrate(DataSource dataSource, MigrationOptions options) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(options, "options");
    if (isMariaDb(dataSource)) {
      FlywaySupport.MARIADB.require();
      return MariaDbMigrator.migrate(dataSource, options);
    }
    FlywaySupport.POSTGRESQL.require();
    requireFenceSchemaOrNone(dataSource, options.schema());
    int applied;
    String version;
    try {
      Flyway flyway = flywayConfiguration(dataSource, options.schema()).load();
      MigrateResult result = flyway.migrate();
      applied = result.migrationsExecuted;
      MigrationInfo current = flyway.info().current();
      version =
          current == null || current.getVersion() == null ? null : current.getVersion().toString();
    } catch (FlywayException e) {
      throw new FencingMigrationException(
          "applying the fencing migrations to schema \""
              + options.schema()
              + "\" failed: "
              + e.getMessage(),
          e);
    }
    return new TableMigrator(dataSource, options).run(applied, version);
  }

  /**
   * The database seam of the migrations: MariaDB (InnoDB) has its own Flyway location and column
   * migration ({@link MariaDbMigrator}); everything else is migrated as PostgreSQL.
   */
  private static boolean isMariaDb(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return dev.fencing.schema.DatabaseProduct.of(c)
          .filter(dev.fencing.schema.DatabaseProduct.MARIADB::equals)
          .isPresent();
    } catch (SQLException e) {
      throw new FencingMigrationException(
          "could not connect to the database: " + e.getMessage(), e);
    }
  }

  /**
   * Refuses a schema that exists, holds tables or functions, and has no fencing history table: it
   * is someone else's schema, and Flyway would only suggest a baseline, which would mark the
   * fencing migrations as applied without running them.
   */
  private static void requireFenceSchemaOrNone(DataSource dataSource, String schema) {
    List<String> relations = new ArrayList<>();
    long functions;
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT c.relname FROM pg_catalog.pg_class c"
                    + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE n.nspname = ? AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')"
                    + " ORDER BY c.relname");
        PreparedStatement fs =
            c.prepareStatement(
                "SELECT count(*) FROM pg_catalog.pg_proc p"
                    + " JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
                    + " WHERE n.nspname = ?")) {
      ps.setString(1, schema);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          relations.add(rs.getString(1));
        }
      }
      fs.setString(1, schema);
      try (ResultSet rs = fs.executeQuery()) {
        rs.next();
        functions = rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new FencingMigrationException(
          "could not inspect schema \"" + schema + "\": " + e.getMessage(), e);
    }
    if (relations.contains(HISTORY_TABLE) || (relations.isEmpty() && functions == 0)) {
      return;
    }
    List<String> shown = relations.subList(0, Math.min(relations.size(), 5));
    throw new FencingMigrationException(
        "schema \""
            + schema
            + "\" is not a fencing schema: it holds "
            + (relations.isEmpty()
                ? functions + " function(s)"
                : relations.size()
                    + " table(s) or other relation(s) ("
                    + String.join(", ", shown)
                    + (relations.size() > shown.size() ? ", ..." : "")
                    + ")")
            + " but no "
            + HISTORY_TABLE
            + " table. The fence needs a schema of its own, which the migrations create: give a"
            + " new name (--schema NAME on the command line, MigrationOptions.schema in Java;"
            + " default \""
            + DEFAULT_SCHEMA
            + "\") and configure fencing-jdbc with FenceOptions.defaults().withSchema(NAME)",
        null);
  }

  /**
   * The Flyway configuration used for the fencing migrations, for callers that want to run them
   * with their own Flyway setup: locations {@value #LOCATION}, history table {@value
   * #HISTORY_TABLE} in {@code schema}, placeholder {@value #SCHEMA_PLACEHOLDER} set to {@code
   * schema}.
   *
   * @param dataSource the target database
   * @param schema the fencing schema, a plain identifier
   * @return a configuration ready for {@code load().migrate()}
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   * @throws NullPointerException if {@code dataSource} is null
   */
  public static FluentConfiguration flywayConfiguration(DataSource dataSource, String schema) {
    Objects.requireNonNull(dataSource, "dataSource");
    FenceSchema.requireIdentifier("schema name", schema);
    return Flyway.configure(FencingMigrations.class.getClassLoader())
        .dataSource(dataSource)
        .schemas(schema)
        .createSchemas(true)
        .table(HISTORY_TABLE)
        .locations(LOCATION)
        .failOnMissingLocations(true)
        .placeholders(Map.of(SCHEMA_PLACEHOLDER, schema))
        .validateMigrationNaming(true);
  }
}
