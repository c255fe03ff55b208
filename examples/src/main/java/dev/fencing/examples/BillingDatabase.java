package dev.fencing.examples;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import javax.sql.DataSource;
import org.jooq.SQLDialect;

/**
 * The one place where the example's own SQL differs between the databases it runs on. Everything
 * else (the DAOs' queries, {@link BillingStats}, {@link RejectedWrites}) is SQL both accept, with
 * identifiers quoted by {@link #quote}.
 *
 * <p>A billing "schema" is a PostgreSQL schema or a MariaDB database; its fence lives in a schema
 * (database) of its own next to it, as {@link BillingSchema} names it.
 */
public enum BillingDatabase {
  /** PostgreSQL: the fence's enforcement trigger is available (trigger mode). */
  POSTGRESQL("PostgreSQL", "jdbc:postgresql:", "classpath:db/billing", SQLDialect.POSTGRES, true) {
    @Override
    String quote(String identifier) {
      return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    @Override
    String numbers(int count) {
      return "generate_series(1, " + count + ") AS g(n)";
    }

    @Override
    List<String> resetBilling(String schema) {
      String s = quote(schema);
      return List.of(
          "TRUNCATE "
              + s
              + ".charges, "
              + s
              + ".invoices, "
              + s
              + ".rejected_writes RESTART IDENTITY");
    }

    @Override
    List<String> drop(String schema, String fenceSchema) {
      return List.of(
          "DROP SCHEMA IF EXISTS " + quote(schema) + ", " + quote(fenceSchema) + " CASCADE");
    }

    @Override
    Properties quickConnect() {
      Properties props = new Properties();
      props.setProperty("connectTimeout", "5");
      props.setProperty("loginTimeout", "5");
      return props;
    }
  },

  /**
   * MariaDB (InnoDB): fencing-jdbc refuses trigger mode and the migrations refuse the enforcement
   * trigger (docs/mariadb.md), so fenced writes go through guarded statements.
   */
  MARIADB("MariaDB", "jdbc:mariadb:", "classpath:db/billing-mariadb", SQLDialect.MARIADB, false) {
    @Override
    String quote(String identifier) {
      return '`' + identifier.replace("`", "``") + '`';
    }

    @Override
    String numbers(int count) {
      return "(SELECT seq AS n FROM seq_1_to_" + count + ") AS g";
    }

    @Override
    List<String> resetBilling(String schema) {
      // TRUNCATE refuses a table that a foreign key references, even an empty one.
      String s = quote(schema);
      return List.of(
          "DELETE FROM " + s + ".charges",
          "DELETE FROM " + s + ".invoices",
          "DELETE FROM " + s + ".rejected_writes");
    }

    @Override
    List<String> drop(String schema, String fenceSchema) {
      return List.of(
          "DROP DATABASE IF EXISTS " + quote(schema),
          "DROP DATABASE IF EXISTS " + quote(fenceSchema));
    }

    @Override
    Properties quickConnect() {
      Properties props = new Properties();
      props.setProperty("connectTimeout", "5000");
      return props;
    }
  };

  private final String label;
  private final String urlPrefix;
  private final String migrations;
  private final SQLDialect jooqDialect;
  private final boolean enforcementTrigger;

  BillingDatabase(
      String label,
      String urlPrefix,
      String migrations,
      SQLDialect jooqDialect,
      boolean enforcementTrigger) {
    this.label = label;
    this.urlPrefix = urlPrefix;
    this.migrations = migrations;
    this.jooqDialect = jooqDialect;
    this.enforcementTrigger = enforcementTrigger;
  }

  /** The database of {@code connection}, from its product name (as fencing-jdbc decides). */
  public static BillingDatabase of(Connection connection) throws SQLException {
    String product = connection.getMetaData().getDatabaseProductName();
    if (product.toLowerCase(Locale.ROOT).contains("mariadb")) {
      return MARIADB;
    }
    if (product.toLowerCase(Locale.ROOT).contains("postgresql")) {
      return POSTGRESQL;
    }
    throw new SQLException("the example runs on PostgreSQL or MariaDB, not on " + product);
  }

  /** The database behind {@code dataSource} (takes one connection). */
  public static BillingDatabase of(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return of(c);
    }
  }

  /**
   * The database a JDBC URL names, from its prefix ({@code jdbc:postgresql:}, {@code
   * jdbc:mariadb:}).
   *
   * @throws IllegalArgumentException for any other URL
   */
  public static BillingDatabase ofUrl(String jdbcUrl) {
    for (BillingDatabase db : values()) {
      if (jdbcUrl.startsWith(db.urlPrefix)) {
        return db;
      }
    }
    throw new IllegalArgumentException(
        "expected jdbc:postgresql:... or jdbc:mariadb:..., got " + jdbcUrl);
  }

  /** The product's name, for messages. */
  public String label() {
    return label;
  }

  /** Flyway location of the billing tables' migrations ({@code ${schema}} placeholder). */
  public String migrations() {
    return migrations;
  }

  /** jOOQ's dialect for the DAO. */
  public SQLDialect jooqDialect() {
    return jooqDialect;
  }

  /**
   * Whether the fencing migrations install the enforcement trigger here and fencing-jdbc offers
   * trigger mode (the unchanged DAOs fenced by the trigger). False on MariaDB, where both are
   * refused by the library.
   */
  public boolean hasEnforcementTrigger() {
    return enforcementTrigger;
  }

  /** {@code identifier} quoted for this database. */
  abstract String quote(String identifier);

  /** A derived table {@code g} with one column {@code n}: the integers 1 to {@code count}. */
  abstract String numbers(int count);

  /** Statements that empty the invoices, charges and recorded rejections. */
  abstract List<String> resetBilling(String schema);

  /** Statements that drop the billing schema and its fence schema, if they exist. */
  abstract List<String> drop(String schema, String fenceSchema);

  /** Driver properties for a connection check that fails within seconds. */
  abstract Properties quickConnect();
}
