/**
 * Makes PostgreSQL reject writes from stale lease holders: the resource fence, guarded statements,
 * a {@link javax.sql.DataSource} wrapper for existing DAOs, and jOOQ support.
 */
module dev.fencing.jdbc {
  requires transitive dev.fencing.core;
  requires transitive java.sql;
  requires dev.fencing.schema;
  requires static transitive org.jooq;
  requires static org.postgresql.jdbc;
  requires static org.mariadb.jdbc;
  requires org.slf4j;

  exports dev.fencing.jdbc;
  exports dev.fencing.jdbc.jooq;
}
