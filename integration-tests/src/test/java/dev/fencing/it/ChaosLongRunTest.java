package dev.fencing.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The long profile: {@code mvn -B -pl integration-tests verify -Pchaos -Dchaos.minutes=30}. Runs
 * fenced runs of three minutes (alternating GuardedStatements and the enforcement trigger, random
 * seeds) for {@code chaos.minutes}, then the fencing-off control for {@code chaos.control.minutes},
 * and writes the report to {@code chaos.report}. Also runnable without Maven: {@link
 * ChaosLongRun#main}. The default build excludes it (see the module's pom); only {@code -Pchaos}
 * runs it.
 */
class ChaosLongRunTest {

  @Test
  void longRun() throws Exception {
    ChaosLongRun.Outcome outcome =
        ChaosLongRun.run(
            Double.parseDouble(System.getProperty("chaos.minutes", "30")),
            Double.parseDouble(System.getProperty("chaos.control.minutes", "3")),
            Path.of(System.getProperty("chaos.report", "target/reliability-report.md")),
            Path.of("target", "chaos-long"));
    assertThat(violations(outcome.fenced())).as("violations with fencing on").isZero();
    assertThat(violations(outcome.off())).as("violations with fencing off").isPositive();
    for (ChaosRun.Result r : outcome.fenced()) {
      String run = r.settings().mode() + " seed " + r.settings().seed();
      assertThat(r.faultsNotFired()).as("fault kinds that never fired, %s", run).isEmpty();
      assertThat(r.event("REJECT")).as("stale writes rejected, %s", run).isPositive();
    }
    for (ChaosRun.Result r : outcome.off()) {
      assertThat(r.check().count("not-registered-holder"))
          .as("writes by a superseded holder, off seed %d", r.settings().seed())
          .isPositive();
    }
    assertThat(outcome.fenced().stream().mapToLong(ChaosRun.Result::counterRecoveries).sum())
        .as("Redis counter recoveries")
        .isPositive();
  }

  private static long violations(List<ChaosRun.Result> runs) {
    return runs.stream().mapToLong(r -> r.check().total()).sum();
  }
}
