package dev.fencing.it;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The long profile's loop. Command line (classpath: the module's test classpath): {@code java
 * dev.fencing.it.ChaosLongRun <minutes> <control-minutes> <report.md> <work-dir>}.
 */
public final class ChaosLongRun {

  /** The runs done. */
  record Outcome(List<ChaosRun.Result> fenced, List<ChaosRun.Result> off) {}

  private ChaosLongRun() {}

  /** Entry point without Maven. */
  public static void main(String[] args) throws Exception {
    Outcome o =
        run(
            Double.parseDouble(args[0]),
            Double.parseDouble(args[1]),
            Path.of(args[2]),
            Path.of(args.length > 3 ? args[3] : "target/chaos-long"));
    long on = o.fenced().stream().mapToLong(r -> r.check().total()).sum();
    long off = o.off().stream().mapToLong(r -> r.check().total()).sum();
    System.out.println("[chaos] done: violations fenced=" + on + " off=" + off);
    System.exit(on == 0 && off > 0 ? 0 : 1);
  }

  static Outcome run(double minutes, double controlMinutes, Path report, Path dir)
      throws Exception {
    Random seeds = new Random();
    long runSeconds = 180;
    List<ChaosRun.Result> fenced = new ArrayList<>();
    List<ChaosRun.Result> off = new ArrayList<>();
    long deadline = System.nanoTime() + (long) (minutes * 60e9);
    int n = 0;
    while (System.nanoTime() - deadline < 0) {
      long left = Math.max(30, (deadline - System.nanoTime()) / 1_000_000_000L);
      String mode = n++ % 2 == 0 ? "guarded" : "trigger";
      fenced.add(once(mode, seeds.nextInt(1_000_000), Math.min(runSeconds, left), dir));
      Report.write(report, Report.render("Long run (in progress)", fenced, off));
    }
    long controlDeadline = System.nanoTime() + (long) (controlMinutes * 60e9);
    while (System.nanoTime() - controlDeadline < 0) {
      long left = Math.max(30, (controlDeadline - System.nanoTime()) / 1_000_000_000L);
      off.add(once("off", seeds.nextInt(1_000_000), Math.min(runSeconds, left), dir));
      Report.write(report, Report.render("Long run (in progress)", fenced, off));
    }
    Report.write(
        report,
        Report.render(
            String.format(
                Locale.ROOT,
                "Long run: %.0f min fenced, %.0f min control",
                minutes,
                controlMinutes),
            fenced,
            off));
    return new Outcome(fenced, off);
  }

  private static ChaosRun.Result once(String mode, long seed, long seconds, Path dir)
      throws Exception {
    System.out.printf(Locale.ROOT, "[chaos] %s run, seed %d, %d s%n", mode, seed, seconds);
    ChaosRun.Result r =
        ChaosRun.run(
            ChaosRun.Settings.of(
                mode, seed, Duration.ofSeconds(seconds), 3, dir.resolve(mode + "-" + seed)));
    System.out.println("[chaos] " + r.summary());
    return r;
  }
}
