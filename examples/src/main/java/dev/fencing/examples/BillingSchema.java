package dev.fencing.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/** Creates, fills, resets and drops the example's billing tables in one schema. */
public final class BillingSchema {

  /** Classpath location of the example's own Flyway migrations. */
  public static final String LOCATION = "classpath:db/billing";

  private final DataSource dataSource;
  private final String schema;

  public BillingSchema(DataSource dataSource, String schema) {
    if (!schema.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException(
          "schema name must be lower case letters, digits and _: " + schema);
    }
    this.dataSource = dataSource;
    this.schema = schema;
  }

  public String schema() {
    return schema;
  }

  /** Creates the schema if needed and applies the billing migrations to it. */
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

  /** Deletes every invoice and charge, keeping the customers. */
  public void resetBilling() throws SQLException {
    exec(
        "TRUNCATE "
            + JdbcBillingDao.quote(schema)
            + ".charges, "
            + JdbcBillingDao.quote(schema)
            + ".invoices RESTART IDENTITY");
  }

  /** Drops the whole schema. */
  public void drop() throws SQLException {
    exec("DROP SCHEMA IF EXISTS " + JdbcBillingDao.quote(schema) + " CASCADE");
  }

  private void exec(String sql) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
