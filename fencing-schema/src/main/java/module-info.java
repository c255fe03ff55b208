/** The fence's SQL contract, shared by {@code fencing-jdbc} and {@code fencing-migrations}. */
module dev.fencing.schema {
  requires transitive java.sql;

  exports dev.fencing.schema;
}
