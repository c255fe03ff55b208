package dev.fencing.migrations.internal;

import dev.fencing.migrations.FencingMigrationException;

/**
 * Flyway's support for a database lives in a module of its own, which the application adds next to
 * its JDBC driver; fencing-migrations depends on Flyway core only. Without the module Flyway fails
 * with a message that does not say which artifact is missing: this check says it first.
 */
public enum FlywaySupport {
  /** PostgreSQL: {@code org.flywaydb:flyway-database-postgresql}. */
  POSTGRESQL(
      "PostgreSQL",
      "org.flywaydb.database.postgresql.PostgreSQLDatabaseType",
      "org.flywaydb:flyway-database-postgresql"),
  /** MariaDB: {@code org.flywaydb:flyway-mysql}. */
  MARIADB(
      "MariaDB",
      "org.flywaydb.database.mysql.mariadb.MariaDBDatabaseType",
      "org.flywaydb:flyway-mysql");

  private final String database;
  private final String typeClass;
  private final String artifact;

  FlywaySupport(String database, String typeClass, String artifact) {
    this.database = database;
    this.typeClass = typeClass;
    this.artifact = artifact;
  }

  /**
   * Refuses to start a migration Flyway cannot run.
   *
   * @throws FencingMigrationException if Flyway's module for this database is not on the class path
   */
  public void require() {
    require(database, typeClass, artifact);
  }

  static void require(String database, String typeClass, String artifact) {
    try {
      Class.forName(typeClass, false, FlywaySupport.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new FencingMigrationException(
          "Flyway's "
              + database
              + " support is not on the class path: add the dependency "
              + artifact
              + " (the same version as flyway-core) next to your JDBC driver, or run the"
              + " command-line tool fencing-migrations.jar, which bundles it",
          e);
    }
  }
}
