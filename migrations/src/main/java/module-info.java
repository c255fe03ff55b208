/**
 * Flyway migrations for fencing: the fence table, the {@code fence_token} and {@code
 * fence_resource} columns on fenced tables, optional trigger enforcement; a command-line entry
 * point.
 *
 * <p>The public API is the package {@code dev.fencing.migrations}. Flyway's module for the database
 * ({@code flyway-database-postgresql} or {@code flyway-mysql}) and the JDBC driver are the
 * application's to add.
 */
module dev.fencing.migrations {
  requires transitive java.sql;
  requires java.logging;
  requires dev.fencing.schema;
  // flyway-core has no module name of its own: this is the name derived from its file name.
  requires transitive flyway.core;

  exports dev.fencing.migrations;

  // The SQL migrations, which Flyway reads as class-path resources: a named module must open the
  // package of a resource for anyone else to read it. (db/fencing-mariadb is not a package name,
  // so it is readable as it is.)
  opens db.fencing;
}
