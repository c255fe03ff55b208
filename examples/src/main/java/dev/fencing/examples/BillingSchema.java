package dev.fencing.examples;

import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates, fills, resets and drops the example's billing tables in one schema, and the fence for
 * them in a schema of its own ({@link #fenceSchema()}). On MariaDB a schema is a database.
 *
 * <p>The billing tables come from the example's Flyway migrations for the {@link BillingDatabase};
 * the fencing migrations then add the fence columns to {@code invoices} and {@code charges}. Where
 * the database has the enforcement trigger (PostgreSQL) they also install it on both, in {@link
 * EnforcementMode#LENIENT lenient} mode: writes that carry a fencing token (made on a connection
 * from a {@code FencedDataSource} in trigger mode inside {@code Fencing.run}) are checked against
 * the fence, token-less writes (the replay's unfenced modes) go through as before. On MariaDB the
 * migrations refuse the trigger, so the tables are only fenced and the fenced writes are guarded
 * statements ({@link BillingDao#guarded}). {@code customers} is only read by the job, so it is not
 * fenced.
 */
public final class BillingSchema {

  /** The fenced tables, all enforced by the trigger in lenient mode. */
  public static final java.util.List<String> FENCED_TABLES =
      java.util.List.of("invoices", "charges");

  /** Suffix of the fence schema: billing schema {@code s} has its fence in {@code s_fence}. */
  public static final String FENCE_SCHEMA_SUFFIX = "_fence";

  /** Longest billing schema name, so that the fence schema's name fits in 63 characters. */
  public static final int MAX_SCHEMA_LENGTH = 63 - FENCE_SCHEMA_SUFFIX.length();

  private final DataSource dataSource;
  private final BillingDatabase database;
  private final String schema;

  /**
   * @param dataSource connections to the database (which one is read from the first connection)
   * @param schema the billing schema's name
   * @throws IllegalArgumentException if the name is not lower case letters, digits and _
   * @throws IllegalStateException if the database cannot be reached or is neither PostgreSQL nor
   *     MariaDB
   */
  public BillingSchema(DataSource dataSource, String schema) {
    if (!schema.matches("[a-z_][a-z0-9_]*") || schema.length() > MAX_SCHEMA_LENGTH) {
      throw new IllegalArgumentException(
          "schema name must be lower case letters, digits and _, at most "
              + MAX_SCHEMA_LENGTH
              + " characters: "
              + schema);
    }
    this.dataSource = dataSource;
    this.schema = schema;
    try {
      this.database = BillingDatabase.of(dataSource);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot tell which database the billing schema is on: " + e.getMessage(), e);
    }
  }

  /** The database the schema is on. */
  public BillingDatabase database() {
    return database;
  }

  public String schema() {
    return schema;
  }

  /** The schema holding the fence of these tables: {@code <schema>_fence}. */
  public String fenceSchema() {
    return schema + FENCE_SCHEMA_SUFFIX;
  }

  /**
   * Creates the schema if needed and applies the billing migrations to it, then the fencing
   * migrations: the fence in {@link #fenceSchema()}, the fence columns on {@link #FENCED_TABLES}
   * and, where the database has it, the lenient enforcement trigger. Both are idempotent.
   */
  public void migrate() {
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(schema)
        .defaultSchema(schema)
        .createSchemas(true)
        .locations(database.migrations())
        .placeholders(Map.of("schema", schema))
        .load()
        .migrate();
    MigrationOptions.Builder fencing = MigrationOptions.builder().schema(fenceSchema());
    for (String table : FENCED_TABLES) {
      if (database.hasEnforcementTrigger()) {
        fencing.enforce(schema + "." + table, EnforcementMode.LENIENT);
      } else {
        fencing.fence(schema + "." + table);
      }
    }
    FencingMigrations.migrate(dataSource, fencing.build());
  }

  /**
   * Inserts {@code count} customers; every tenth is inactive. Plans cycle through basic, pro and
   * team.
   */
  public void seedCustomers(int count) throws SQLException {
    if (count < 1) {
      return;
    }
    exec(
        "INSERT INTO "
            + database.quote(schema)
            + ".customers (name, email, active, plan, amount_cents)"
            + " SELECT CONCAT('Customer ', n), CONCAT('customer', n, '@example.test'), n % 10 <> 0,"
            + " CASE n % 3 WHEN 0 THEN 'basic' WHEN 1 THEN 'pro' ELSE 'team' END,"
            + " CASE n % 3 WHEN 0 THEN 900 WHEN 1 THEN 2900 ELSE 9900 END"
            + " FROM "
            + database.numbers(count));
  }

  /**
   * Deletes every invoice, charge and recorded rejection, keeping the customers. The fence keeps
   * its registrations: it never goes backwards.
   */
  public void resetBilling() throws SQLException {
    for (String sql : database.resetBilling(schema)) {
      exec(sql);
    }
  }

  /** Drops the whole schema and its fence schema. */
  public void drop() throws SQLException {
    for (String sql : database.drop(schema, fenceSchema())) {
      exec(sql);
    }
  }

  private void exec(String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
