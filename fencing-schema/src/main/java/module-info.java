/** The fence's SQL contract, shared by {@code fencing-jdbc} and {@code fencing-migrations}. */
module dev.fencing.schema {
  exports dev.fencing.schema;
}
