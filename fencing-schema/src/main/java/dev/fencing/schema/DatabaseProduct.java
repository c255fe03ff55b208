package dev.fencing.schema;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Optional;

/**
 * The databases fencing speaks, decided in one place from what the driver reports ({@link
 * java.sql.DatabaseMetaData#getDatabaseProductName()}): the dialect of the guarded SQL, of the
 * plain-SQL check and of the migrations all follow from it.
 */
public enum DatabaseProduct {
  /** PostgreSQL. */
  POSTGRESQL,
  /** MariaDB (InnoDB). */
  MARIADB;

  /**
   * The product a driver reports, if fencing speaks it.
   *
   * @param productName as {@link java.sql.DatabaseMetaData#getDatabaseProductName()} returns it, or
   *     null
   * @return the product, or empty for any other (MySQL included: not tested, so not assumed)
   */
  public static Optional<DatabaseProduct> fromProductName(String productName) {
    String lower = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (lower.contains("postgresql")) {
      return Optional.of(POSTGRESQL);
    }
    if (lower.contains("mariadb")) {
      return Optional.of(MARIADB);
    }
    return Optional.empty();
  }

  /**
   * The product {@code connection} talks to.
   *
   * @param connection an open connection, left open
   * @return the product, or empty if fencing does not speak it
   * @throws SQLException if the metadata could not be read
   */
  public static Optional<DatabaseProduct> of(Connection connection) throws SQLException {
    return fromProductName(connection.getMetaData().getDatabaseProductName());
  }
}
