package dev.fencing.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The short profile, part of {@code mvn verify}: a fenced run with a fixed seed
 * (GuardedStatements), a fenced run with a random seed (enforcement trigger, plain SQL), and the
 * fencing-off control, which must find violations. Durations: {@code -Dchaos.short.seconds}, {@code
 * -Dchaos.short.control.seconds}; replay a seed with {@code -Dchaos.seed=N}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChaosShortTest {

  static final long FIXED_SEED = 20240611L;
  private static final List<ChaosRun.Result> FENCED = new ArrayList<>();
  private static final List<ChaosRun.Result> OFF = new ArrayList<>();

  static long seconds(String property, long fallback) {
    String value = System.getProperty(property, "");
    return value.isBlank() ? fallback : Long.parseLong(value.trim());
  }

  static long randomSeed() {
    String value = System.getProperty("chaos.seed", "");
    return value.isBlank() ? new Random().nextInt(1_000_000) : Long.parseLong(value.trim());
  }

  static ChaosRun.Settings settings(String mode, long seed, long seconds) {
    return new ChaosRun.Settings(
        mode,
        seed,
        Duration.ofSeconds(seconds),
        4,
        2,
        1000,
        true,
        Path.of("target", "chaos", mode + "-" + seed + "-" + System.currentTimeMillis()));
  }

  private static ChaosRun.Result run(String mode, long seed, long seconds) throws Exception {
    System.out.printf(Locale.ROOT, "[chaos] %s run, seed %d, %d s%n", mode, seed, seconds);
    ChaosRun.Result r = ChaosRun.run(settings(mode, seed, seconds));
    System.out.println("[chaos] " + r.summary());
    return r;
  }

  private static void assertSafeAndBitten(ChaosRun.Result r) {
    assertThat(r.check().examples())
        .as("violations with fencing on (replay with -Dchaos.seed=%d)", r.settings().seed())
        .isEmpty();
    assertThat(r.check().total()).isZero();
    assertThat(r.event("LOST")).as("leases lost while working").isPositive();
    assertThat(r.accepted()).as("progress").isGreaterThan(50);
  }

  @Test
  @Order(1)
  void fencedWithTheFixedSeedHasNoViolation() throws Exception {
    ChaosRun.Result r = run("guarded", FIXED_SEED, seconds("chaos.short.seconds", 40));
    FENCED.add(r);
    assertSafeAndBitten(r);
  }

  @Test
  @Order(2)
  void fencedByTheTriggerWithARandomSeedHasNoViolation() throws Exception {
    ChaosRun.Result r = run("trigger", randomSeed(), seconds("chaos.short.seconds", 40));
    FENCED.add(r);
    assertSafeAndBitten(r);
    assertThat(FENCED.stream().mapToLong(x -> x.event("REJECT")).sum())
        .as("stale writes that reached the database and were rejected, both fenced runs")
        .isPositive();
    assertThat(FENCED.stream().mapToLong(x -> x.event("LOST")).sum())
        .as("leases lost while working, both fenced runs: the faults must bite")
        .isGreaterThanOrEqualTo(4);
  }

  @Test
  @Order(3)
  void withFencingOffTheCheckerFindsViolations() throws Exception {
    ChaosRun.Result r = run("off", FIXED_SEED, seconds("chaos.short.control.seconds", 30));
    OFF.add(r);
    assertThat(r.check().total()).as("the checker must be able to fail").isPositive();
  }

  @AfterAll
  static void report() throws Exception {
    String md = Report.render("Short profile", FENCED, OFF);
    Report.write(Path.of("target", "chaos-short-report.md"), md);
    System.out.println(md);
  }
}
