package dev.fencing.examples;

import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates, fills, resets and drops the example's billing tables in one schema, and the fence for
 * them in a schema of its own ({@link #fenceSchema()}).
 *
 * <p>The billing tables come from the example's Flyway migrations; the fencing migrations then add
 * {@code fence_token} to {@code invoices} and {@code charges} and install the enforcement trigger
 * on both, in {@link EnforcementMode#LENIENT lenient} mode: writes that carry a fencing token (made
 * on a connection from a {@code FencedDataSource} inside {@code Fencing.run}) are checked against
 * the fence, token-less writes (the replay's unfenced modes) go through as before. {@code
 * customers} is only read by the job, so it is not fenced.
 */
public final class BillingSchema {

  /** Classpath location of the example's own Flyway migrations. */
  public static final String LOCATION = "classpath:db/billing";

  /** The fenced tables, all enforced by the trigger in lenient mode. */
  public static final java.util.List<String> FENCED_TABLES =
      java.util.List.of("invoices", "charges");

  /** Suffix of the fence schema: billing schema {@code s} has its fence in {@code s_fence}. */
  public static final String FENCE_SCHEMA_SUFFIX = "_fence";

  /** Longest billing schema name, so that the fence schema's name fits in 63 characters. */
  public static final int MAX_SCHEMA_LENGTH = 63 - FENCE_SCHEMA_SUFFIX.length();

  private final DataSource dataSource;
  private final String schema;

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
   * migrations: the fence in {@link #fenceSchema()}, {@code fence_token} and the lenient
   * enforcement trigger on {@link #FENCED_TABLES}. Both are idempotent.
   */
  public void migrate() {
    Flyway.configure()
        .dataSource(dataSource)
        .schemas(schema)
        .defaultSchema(schema)
        .createSchemas(true)
        .locations(LOCATION)
        .placeholders(Map.of("schema", schema))
        .load()
        .migrate();
    MigrationOptions.Builder fencing = MigrationOptions.builder().schema(fenceSchema());
    for (String table : FENCED_TABLES) {
      fencing.enforce(schema + "." + table, EnforcementMode.LENIENT);
    }
    FencingMigrations.migrate(dataSource, fencing.build());
  }

  /**
   * Inserts {@code count} customers; every tenth is inactive. Plans cycle through basic, pro and
   * team.
   */
  public void seedCustomers(int count) throws SQLException {
    String sql =
        "INSERT INTO "
            + JdbcBillingDao.quote(schema)
            + ".customers (name, email, active, plan, amount_cents)"
            + " SELECT 'Customer ' || n, 'customer' || n || '@example.test', n % 10 <> 0,"
            + " (ARRAY['basic','pro','team'])[1 + n % 3], (ARRAY[900,2900,9900])[1 + n % 3]"
            + " FROM generate_series(1, ?) AS n";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setInt(1, count);
      ps.executeUpdate();
    }
  }

  /**
   * Deletes every invoice, charge and recorded rejection, keeping the customers. The fence keeps
   * its registrations: it never goes backwards.
   */
  public void resetBilling() throws SQLException {
    String s = JdbcBillingDao.quote(schema);
    exec(
        "TRUNCATE "
            + s
            + ".charges, "
            + s
            + ".invoices, "
            + s
            + ".rejected_writes RESTART IDENTITY");
  }

  /** Drops the whole schema and its fence schema. */
  public void drop() throws SQLException {
    exec(
        "DROP SCHEMA IF EXISTS "
            + JdbcBillingDao.quote(schema)
            + ", "
            + JdbcBillingDao.quote(fenceSchema())
            + " CASCADE");
  }

  private void exec(String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
