package dev.fencing.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The short profile on MariaDB (InnoDB), part of {@code mvn verify}: the guarded mode (the one
 * MariaDB offers: trigger mode and the plain-SQL rewrite are refused there) with a fixed seed under
 * every fault kind, and a fencing-off control under every fault kind, which must find stale writes
 * committed. Writes are judged at commit time through {@link MariaDbChaos}'s commit clock.
 * Durations: {@code -Dchaos.short.seconds} (fenced, 30 s) and {@code -Dchaos.short.control.seconds}
 * (control, 20 s); {@code -Dchaos.seed=N} replays a seed. A failure prints the command that replays
 * its run.
 */
class MariaDbChaosShortTest {

  static final long FIXED_SEED = ChaosShortTest.FIXED_SEED;

  /** Kinds that check the MariaDB history recorder itself: none may be found, fenced or not. */
  /**
   * Every fault kind but {@code CUT_IN_TRANSACTION}: its held step watches {@code pg_stat_activity}
   * for the successor's wait, which is PostgreSQL's; on MariaDB the fence row's share lock is
   * checked by {@code MariaDbFencingTest} and the interleaving matrix instead. And but {@code
   * PG_FAILOVER}, which promotes a PostgreSQL standby.
   */
  static final Set<ChaosRun.Fault> MARIADB_FAULTS =
      EnumSet.complementOf(
          EnumSet.of(ChaosRun.Fault.CUT_IN_TRANSACTION, ChaosRun.Fault.PG_FAILOVER));

  static final List<String> RECORDER_KINDS =
      List.of("unclocked-write", "clock-reused", "unlogged-write");

  private static ChaosRun.Result run(String name, String mode, long seed, long seconds)
      throws Exception {
    ChaosRun.Settings settings =
        ChaosRun.Settings.of(
                mode,
                seed,
                Duration.ofSeconds(seconds),
                2,
                Path.of(
                    "target",
                    "chaos",
                    "mariadb-" + mode + "-" + seed + "-" + System.currentTimeMillis()))
            .withShapes(System.getProperty("chaos.shapes", "").trim())
            .withFaults(MARIADB_FAULTS);
    System.out.printf(
        Locale.ROOT,
        "[chaos] mariadb-%s: %s run, seed %d, %d s, faults %s%n",
        name,
        mode,
        seed,
        seconds,
        settings.faults());
    ChaosRun.Result r = ChaosRun.run(settings, MariaDbChaos.INSTANCE);
    System.out.println("[chaos] mariadb " + r.summary());
    boolean fenced = !mode.equals("off");
    Report.write(
        Path.of("target", "chaos-short-mariadb-" + name + ".md"),
        Report.render(
            "Short profile on MariaDB: " + name,
            fenced ? List.of(r) : List.of(),
            fenced ? List.of() : List.of(r)));
    return r;
  }

  private static String replay(String method, ChaosRun.Result r, String secondsProperty) {
    return String.format(
        Locale.ROOT,
        "replay: mvn -B -pl integration-tests -am verify -Dtest='MariaDbChaosShortTest#%s'"
            + " -Dsurefire.failIfNoSpecifiedTests=false -Dchaos.seed=%d -D%s=%d%s",
        method,
        r.settings().seed(),
        secondsProperty,
        r.settings().duration().toSeconds(),
        r.settings().shapes().isBlank() ? "" : " -Dchaos.shapes=" + r.settings().shapes());
  }

  private static void assertRecorderSound(ChaosRun.Result r, String replay) {
    assertThat(r.check().violations()).as("recorder checks ran").containsKeys("unclocked-write");
    for (String kind : RECORDER_KINDS) {
      assertThat(r.check().count(kind)).as("%s (%s)", kind, replay).isZero();
    }
  }

  @Test
  void guardedStatementsCommitNoStaleWrite() throws Exception {
    ChaosRun.Result r =
        run(
            "guarded",
            "guarded",
            ChaosShortTest.seed(FIXED_SEED),
            ChaosShortTest.seconds("chaos.short.seconds", 30));
    String replay = replay("guardedStatementsCommitNoStaleWrite", r, "chaos.short.seconds");
    assertRecorderSound(r, replay);
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
  void withFencingOffEveryFaultShowsInTheHistory() throws Exception {
    ChaosRun.Result r =
        run(
            "off-all",
            "off",
            ChaosShortTest.seed(FIXED_SEED),
            ChaosShortTest.seconds("chaos.short.control.seconds", 20));
    String replay =
        replay("withFencingOffEveryFaultShowsInTheHistory", r, "chaos.short.control.seconds");
    assertRecorderSound(r, replay);
    assertThat(r.faultsNotFired()).as("fault kinds that never fired (%s)", replay).isEmpty();
    for (String kind : List.of("stale-accepted", "not-registered-holder")) {
      assertThat(r.check().count(kind))
          .as("%s with fencing off, every fault (%s)", kind, replay)
          .isPositive();
    }
  }
}
