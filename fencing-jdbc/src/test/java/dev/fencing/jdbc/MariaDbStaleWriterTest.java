package dev.fencing.jdbc;

/** The stale-writer suite, with its fencing-off controls, on MariaDB (InnoDB). */
class MariaDbStaleWriterTest extends StaleWriterTest {

  @Override
  FencingFixture newFixture() {
    return FencingFixture.onMariaDb();
  }
}
