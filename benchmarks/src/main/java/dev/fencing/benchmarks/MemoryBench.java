package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * Benchmark 6: bytes retained per held lease, from two class histograms of live objects (taken
 * after a full GC by the JVM's {@code GC.class_histogram} diagnostic command): one before and one
 * while holding {@code count} leases, the difference divided by {@code count}.
 */
final class MemoryBench {

  /** Bytes and instances per lease of one class. */
  record ClassShare(String className, double instancesPerLease, double bytesPerLease) {}

  /** What the run measured. */
  record Result(int leases, double bytesPerLease, List<ClassShare> topClasses) {}

  private static final Pattern LINE =
      Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)(?:\\s.*)?$");

  private MemoryBench() {}

  static Result run(Env env, int count) throws Exception {
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(env.prefix + "mem:");
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofSeconds(60)).withMaxWait(Duration.ofSeconds(5));
    try (RedisLeaseManager manager = RedisLeaseManager.create(env.redisson, options)) {
      // warm-up: classes loaded, connections open, scheduler queue grown and shrunk
      List<Lease> warm = new ArrayList<>();
      for (int i = 0; i < Math.min(count, 2_000); i++) {
        warm.add(manager.acquire("warm-" + i, request));
      }
      HeartbeatBench.releaseAll(warm);
      warm.clear();
      Lease[] held = new Lease[count];
      Map<String, long[]> before = histogram();
      for (int i = 0; i < count; i++) {
        held[i] = manager.acquire("lease-" + i, request);
      }
      Map<String, long[]> after = histogram();
      long total = after.get("Total")[1] - before.get("Total")[1];
      List<ClassShare> shares = new ArrayList<>();
      for (Map.Entry<String, long[]> e : after.entrySet()) {
        if (e.getKey().equals("Total")) {
          continue;
        }
        long[] b = before.getOrDefault(e.getKey(), new long[2]);
        long bytes = e.getValue()[1] - b[1];
        long instances = e.getValue()[0] - b[0];
        shares.add(new ClassShare(e.getKey(), instances / (double) count, bytes / (double) count));
      }
      shares.sort(Comparator.comparingDouble(ClassShare::bytesPerLease).reversed());
      HeartbeatBench.releaseAll(List.of(held));
      return new Result(
          count, total / (double) count, shares.subList(0, Math.min(10, shares.size())));
    }
  }

  /** Class name to {instances, bytes} of live objects, plus "Total". */
  private static Map<String, long[]> histogram() throws Exception {
    String text =
        (String)
            ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "gcClassHistogram",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
    Map<String, long[]> classes = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (m.matches()) {
        classes.put(
            m.group(3), new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
      } else if (line.startsWith("Total")) {
        String[] parts = line.trim().split("\\s+");
        classes.put("Total", new long[] {Long.parseLong(parts[1]), Long.parseLong(parts[2])});
      }
    }
    return classes;
  }
}
