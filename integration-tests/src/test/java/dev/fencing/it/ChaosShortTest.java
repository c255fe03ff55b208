package dev.fencing.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The short profile, part of {@code mvn verify}: a fenced run with a fixed seed
 * (GuardedStatements), a fenced run with a random seed (enforcement trigger, plain SQL), and two
 * fencing-off controls (pauses alone; every fault), which must find the violations they are built
 * to cause. Each test stands alone (any order, any subset). Durations: {@code
 * -Dchaos.short.seconds}, {@code -Dchaos.short.control.seconds}; {@code -Dchaos.seed=N} sets the
 * seed of whichever runs are selected; {@code -Dchaos.shapes=batch,continue} restricts the workers'
 * transaction shapes. A failure prints the command that replays its run.
 */
class ChaosShortTest {

  static final long FIXED_SEED = 20240611L;

  static long seconds(String property, long fallback) {
    String value = System.getProperty(property, "");
    return value.isBlank() ? fallback : Long.parseLong(value.trim());
  }

  static long seed(long fallback) {
    String value = System.getProperty("chaos.seed", "");
    return value.isBlank() ? fallback : Long.parseLong(value.trim());
  }

  private static ChaosRun.Settings settings(String mode, long seed, long seconds) {
    return ChaosRun.Settings.of(
            mode,
            seed,
            Duration.ofSeconds(seconds),
            2,
            Path.of("target", "chaos", mode + "-" + seed + "-" + System.currentTimeMillis()))
        .withShapes(System.getProperty("chaos.shapes", "").trim());
  }

  private static ChaosRun.Result run(String name, ChaosRun.Settings settings) throws Exception {
    System.out.printf(
        Locale.ROOT,
        "[chaos] %s: %s run, seed %d, %d s, faults %s%n",
        name,
        settings.mode(),
        settings.seed(),
        settings.duration().toSeconds(),
        settings.faults());
    ChaosRun.Result r = ChaosRun.run(settings);
    System.out.println("[chaos] " + r.summary());
    boolean fenced = !settings.mode().equals("off");
    String md =
        Report.render(
            "Short profile: " + name,
            fenced ? List.of(r) : List.of(),
            fenced ? List.of() : List.of(r));
    Report.write(Path.of("target", "chaos-short-" + name + ".md"), md);
    return r;
  }

  /** The command that replays the run of test method {@code method}. */
  static String replay(String method, ChaosRun.Result r, String secondsProperty) {
    return String.format(
        Locale.ROOT,
        "replay: mvn -B -pl integration-tests -am verify -Dtest='ChaosShortTest#%s'"
            + " -Dsurefire.failIfNoSpecifiedTests=false -Dchaos.seed=%d -D%s=%d%s",
        method,
        r.settings().seed(),
        secondsProperty,
        r.settings().duration().toSeconds(),
        r.settings().shapes().isBlank() ? "" : " -Dchaos.shapes=" + r.settings().shapes());
  }

  private static void assertFencedRun(String method, ChaosRun.Result r) {
    String replay = replay(method, r, "chaos.short.seconds");
    assertThat(r.check().examples()).as("violations with fencing on (%s)", replay).isEmpty();
    assertThat(r.check().total()).as("violations with fencing on (%s)", replay).isZero();
    assertThat(r.faultsNotFired()).as("fault kinds that never fired (%s)", replay).isEmpty();
    assertThat(r.event("LOST"))
        .as("leases lost while working: the faults must bite (%s)", replay)
        .isPositive();
    assertThat(r.event("REJECT"))
        .as("stale writes that reached the database and were rejected (%s)", replay)
        .isPositive();
    assertThat(r.counterRecoveries())
        .as("Redis counter recoveries after a lost counter (%s)", replay)
        .isPositive();
    assertThat(r.accepted()).as("progress (%s)", replay).isGreaterThan(50);
  }

  @Test
  void guardedStatementsCommitNoStaleWrite() throws Exception {
    ChaosRun.Result r =
        run("guarded", settings("guarded", seed(FIXED_SEED), seconds("chaos.short.seconds", 30)));
    assertFencedRun("guardedStatementsCommitNoStaleWrite", r);
  }

  @Test
  void theTriggerCommitsNoStaleWrite() throws Exception {
    ChaosRun.Result r =
        run(
            "trigger",
            settings(
                "trigger",
                seed(new Random().nextInt(1_000_000)),
                seconds("chaos.short.seconds", 30)));
    assertFencedRun("theTriggerCommitsNoStaleWrite", r);
  }

  /**
   * The unchanged plain SQL of the trigger run, on tables without the trigger, through a fenced
   * data source in default mode: the connection rewrites each statement into its guarded form.
   */
  @Test
  void rewrittenPlainSqlCommitsNoStaleWrite() throws Exception {
    ChaosRun.Result r =
        run(
            "rewrite",
            settings(
                "rewrite",
                seed(new Random().nextInt(1_000_000)),
                seconds("chaos.short.seconds", 30)));
    assertFencedRun("rewrittenPlainSqlCommitsNoStaleWrite", r);
  }

  @Test
  void withFencingOffPausesAloneLetStaleWritesCommit() throws Exception {
    ChaosRun.Result r =
        run(
            "off-pauses",
            settings("off", seed(FIXED_SEED), seconds("chaos.short.pauses.seconds", 10))
                .withFaults(EnumSet.of(ChaosRun.Fault.PAUSE_WORKER)));
    String replay =
        replay("withFencingOffPausesAloneLetStaleWritesCommit", r, "chaos.short.pauses.seconds");
    // No Redis fault: tokens only grow, so what is found here comes from paused holders alone.
    assertThat(r.faultsNotFired()).as("fault kinds that never fired (%s)", replay).isEmpty();
    assertThat(r.check().count("stale-accepted") + r.check().count("duplicate-seq"))
        .as("stale-accepted or duplicate-seq with fencing off, pauses alone (%s)", replay)
        .isPositive();
    assertThat(r.check().count("not-registered-holder"))
        .as("writes by a superseded holder with fencing off, pauses alone (%s)", replay)
        .isPositive();
  }

  @Test
  void withFencingOffEveryFaultShowsInTheHistory() throws Exception {
    ChaosRun.Result r =
        run(
            "off-all",
            settings("off", seed(FIXED_SEED), seconds("chaos.short.control.seconds", 20)));
    String replay =
        replay("withFencingOffEveryFaultShowsInTheHistory", r, "chaos.short.control.seconds");
    assertThat(r.faultsNotFired()).as("fault kinds that never fired (%s)", replay).isEmpty();
    for (String kind : List.of("stale-accepted", "not-registered-holder")) {
      assertThat(r.check().count(kind))
          .as("%s with fencing off, every fault (%s)", kind, replay)
          .isPositive();
    }
  }
}
