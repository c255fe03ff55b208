package dev.fencing.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Runs every benchmark for a fraction of a second against the real servers, so `mvn verify` notices
 * when one breaks. The numbers mean nothing and are not checked: benchmarks are never timed
 * assertions.
 */
class SmokeTest {

  @Test
  void everyBenchmarkRuns() throws Exception {
    String report = Main.run(Main.parse(new String[] {"--smoke"}));
    for (String expected :
        new String[] {
          LeaseCycleBench.RFENCED,
          HandoffBench.FENCING,
          JdbcBench.TRIGGER,
          JdbcBench.BATCH_GUARDED,
          JdbcBench.JOOQ_FENCED,
          "heartbeat: 100 leases",
          "bytes retained per held lease"
        }) {
      assertTrue(report.contains(expected), () -> "missing " + expected + " in\n" + report);
    }
  }

  @Test
  void theGroupsRunOnlyWhenNamedRun() throws Exception {
    String report =
        Main.run(Main.parse(new String[] {"--smoke", "--only", "registration,mariadb-batch"}));
    for (String expected :
        new String[] {
          "registration, PostgreSQL", "registration, MariaDB", MariaDbBench.BATCH_GUARDED
        }) {
      assertTrue(report.contains(expected), () -> "missing " + expected + " in\n" + report);
    }
  }
}
