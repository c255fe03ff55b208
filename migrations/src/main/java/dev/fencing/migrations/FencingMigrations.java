package dev.fencing.migrations;

import dev.fencing.migrations.internal.TableMigrator;
import dev.fencing.schema.FenceSchema;
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
   * @throws FencingMigrationException if Flyway or a statement failed, a table does not exist, or
   *     an existing {@code fence_token} column is not {@code bigint NOT NULL}
   * @throws NullPointerException if an argument is null
   */
  public static MigrationReport migrate(DataSource dataSource, MigrationOptions options) {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(options, "options");
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
