package dev.fencing.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Renders the figures of a series of runs as Markdown. */
final class Report {

  private Report() {}

  static String render(String title, List<ChaosRun.Result> fenced, List<ChaosRun.Result> off) {
    StringBuilder md = new StringBuilder();
    md.append("## ").append(title).append("\n\n");
    md.append("Generated ").append(Instant.now()).append(".\n\n");
    md.append(table("Fencing on", fenced));
    md.append(table("Fencing off (control)", off));
    md.append("### Totals\n\n");
    md.append("| | fencing on | fencing off |\n|---|---|---|\n");
    row(md, "runs", fenced.size(), off.size());
    row(md, "minutes", minutes(fenced), minutes(off));
    for (ChaosRun.Fault f : ChaosRun.Fault.values()) {
      row(md, "fault " + f.name().toLowerCase(Locale.ROOT), faults(fenced, f), faults(off, f));
    }
    row(md, "writes attempted", sum(fenced, "ATTEMPT"), sum(off, "ATTEMPT"));
    row(md, "writes accepted (ledger rows)", accepted(fenced), accepted(off));
    row(md, "writes rejected as stale", sum(fenced, "REJECT"), sum(off, "REJECT"));
    row(md, "writes failed otherwise", sum(fenced, "ERROR"), sum(off, "ERROR"));
    row(md, "leases acquired", sum(fenced, "ACQUIRED"), sum(off, "ACQUIRED"));
    row(md, "leases lost while working", sum(fenced, "LOST"), sum(off, "LOST"));
    row(md, "worker crashes (no release)", sum(fenced, "CRASH"), sum(off, "CRASH"));
    row(
        md,
        "Redis counter recoveries",
        fenced.stream().mapToLong(ChaosRun.Result::counterRecoveries).sum(),
        off.stream().mapToLong(ChaosRun.Result::counterRecoveries).sum());
    row(md, "**violations**", violations(fenced), violations(off));
    Map<String, Long> onKinds = kinds(fenced);
    Map<String, Long> offKinds = kinds(off);
    for (String kind : offKinds.keySet()) {
      row(md, "violations: " + kind, onKinds.getOrDefault(kind, 0L), offKinds.get(kind));
    }
    md.append('\n');
    return md.toString();
  }

  private static String table(String title, List<ChaosRun.Result> runs) {
    StringBuilder md = new StringBuilder("### ").append(title).append("\n\n");
    if (runs.isEmpty()) {
      return md.append("(none)\n\n").toString();
    }
    md.append(
        "| mode | seed | s | faults | attempted | accepted | rejected | errors | leases |"
            + " lost while working | violations |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (ChaosRun.Result r : runs) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |%n",
              r.settings().mode(),
              r.settings().seed(),
              r.took().toSeconds(),
              r.faults().values().stream().mapToInt(Integer::intValue).sum(),
              r.event("ATTEMPT"),
              r.accepted(),
              r.event("REJECT"),
              r.event("ERROR"),
              r.event("ACQUIRED"),
              r.event("LOST"),
              r.check().total()));
    }
    md.append('\n');
    List<String> examples =
        runs.stream().flatMap(r -> r.check().examples().stream()).limit(8).toList();
    if (!examples.isEmpty()) {
      md.append("Examples of violations:\n\n```\n");
      examples.forEach(e -> md.append(e).append('\n'));
      md.append("```\n\n");
    }
    return md.toString();
  }

  private static void row(StringBuilder md, String name, Object on, Object off) {
    md.append("| ").append(name).append(" | ").append(on).append(" | ").append(off).append(" |\n");
  }

  private static String minutes(List<ChaosRun.Result> runs) {
    return String.format(
        Locale.ROOT, "%.1f", runs.stream().mapToLong(r -> r.took().toSeconds()).sum() / 60.0);
  }

  private static long faults(List<ChaosRun.Result> runs, ChaosRun.Fault f) {
    return runs.stream().mapToLong(r -> r.faults().getOrDefault(f, 0)).sum();
  }

  private static long sum(List<ChaosRun.Result> runs, String event) {
    return runs.stream().mapToLong(r -> r.event(event)).sum();
  }

  private static long accepted(List<ChaosRun.Result> runs) {
    return runs.stream().mapToLong(ChaosRun.Result::accepted).sum();
  }

  private static long violations(List<ChaosRun.Result> runs) {
    return runs.stream().mapToLong(r -> r.check().total()).sum();
  }

  private static Map<String, Long> kinds(List<ChaosRun.Result> runs) {
    Map<String, Long> kinds = new TreeMap<>();
    for (ChaosRun.Result r : runs) {
      r.check().violations().forEach((k, v) -> kinds.merge(k, v, Long::sum));
    }
    return kinds;
  }

  static void write(Path path, String markdown) throws IOException {
    if (path.getParent() != null) {
      Files.createDirectories(path.getParent());
    }
    Files.writeString(path, markdown, StandardCharsets.UTF_8);
  }
}
