/**
 * Test support for fencing: the {@code LeaseManager} contract as a reusable JUnit 5 suite, an
 * in-memory {@code LeaseManager} on a settable clock, and the stale-writer probe that proves a
 * team's own DAOs are fenced ({@code StaleWriterProbe}, {@code @FencingTest}).
 */
module dev.fencing.testing {
  requires transitive dev.fencing.core;
  requires transitive dev.fencing.jdbc;
  requires transitive java.sql;
  requires transitive org.junit.jupiter.api;
  requires dev.fencing.schema;
  requires static org.jooq; // read by fencing-jdbc (optional there); not needed at run time
  requires org.junit.platform.commons;
  requires org.assertj.core;
  requires java.logging;

  exports dev.fencing.testing;

  // JUnit invokes the suite's test methods reflectively.
  opens dev.fencing.testing to
      org.junit.platform.commons;
}
