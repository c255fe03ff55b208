/**
 * The {@code LeaseManager} contract as a reusable JUnit 5 suite: every {@code LeaseManager}
 * implementation must pass it.
 */
module dev.fencing.testing {
  requires transitive dev.fencing.core;
  requires transitive org.junit.jupiter.api;
  requires org.assertj.core;

  exports dev.fencing.testing;

  // JUnit invokes the suite's test methods reflectively.
  opens dev.fencing.testing to
      org.junit.platform.commons;
}
