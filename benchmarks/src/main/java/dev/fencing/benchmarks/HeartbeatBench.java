package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import dev.fencing.core.RedisLeaseManager;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.codec.StringCodec;

/**
 * Benchmark 5: many leases held at once by one manager, renewed by its heartbeat for a while.
 * Counts renewals, failures and losses, the longest gap between two renewals of one lease, the CPU
 * this JVM used (process, heartbeat thread, Redisson's I/O threads) and the Redis commands per
 * second.
 */
final class HeartbeatBench {

  /** What the run measured. */
  record Result(
      int leases,
      Duration leaseTime,
      Duration renewInterval,
      Duration duration,
      double acquireSeconds,
      long renewals,
      long renewalFailures,
      long lost,
      int notHeldAtEnd,
      int missingInRedisAtEnd,
      long minTtlMillisAtEnd,
      double maxGapSeconds,
      double idleCpuPercent,
      double processCpuPercent,
      double heartbeatThreadCpuPercent,
      double redissonThreadsCpuPercent,
      double evalShaPerSecond,
      double serverCommandsPerSecond) {

    boolean noLeaseLost() {
      return lost == 0 && notHeldAtEnd == 0 && missingInRedisAtEnd == 0;
    }
  }

  private HeartbeatBench() {}

  static Result run(Env env, int count, Duration leaseTime, Duration duration, Duration idle)
      throws Exception {
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(env.prefix + "hb:");
    LeaseRequest request = LeaseRequest.forLeaseTime(leaseTime).withMaxWait(Duration.ofSeconds(5));
    Counting observer = new Counting();
    double idleCpu = cpuPercent(idle);
    try (RedisLeaseManager manager = RedisLeaseManager.create(env.redisson, options, observer)) {
      long acquireStart = System.nanoTime();
      List<Lease> leases = acquireAll(manager, request, count);
      double acquireSeconds = (System.nanoTime() - acquireStart) / 1e9;
      Thread.sleep(1_000);

      Snapshot start = Snapshot.take(env, observer);
      long end = System.nanoTime() + duration.toNanos();
      long nextReport = System.nanoTime() + 60_000_000_000L;
      while (System.nanoTime() - end < 0) {
        Thread.sleep(Math.max(1, Math.min(1_000, (end - System.nanoTime()) / 1_000_000)));
        if (System.nanoTime() - nextReport >= 0) {
          System.out.printf(
              "  heartbeat: %d renewals, %d failures, %d lost so far%n",
              observer.renewals.get(), observer.failures.get(), observer.lost.get());
          nextReport += 60_000_000_000L;
        }
      }
      Snapshot stop = Snapshot.take(env, observer);

      long now = System.nanoTime();
      long maxGap = 0;
      for (long[] times : observer.times.values()) {
        synchronized (times) {
          maxGap = Math.max(maxGap, Math.max(times[1], now - times[0]));
        }
      }
      int notHeld = 0;
      for (Lease lease : leases) {
        if (!lease.isHeld()) {
          notHeld++;
        }
      }
      long[] ttl = ttls(env, options.keyPrefix(), count);
      double seconds = (stop.wallNanos - start.wallNanos) / 1e9;
      Result result =
          new Result(
              count,
              leaseTime,
              request.renewInterval(),
              duration,
              acquireSeconds,
              stop.renewals - start.renewals,
              observer.failures.get(),
              observer.lost.get(),
              notHeld,
              (int) ttl[0],
              ttl[1],
              maxGap / 1e9,
              idleCpu,
              100.0 * (stop.processCpu - start.processCpu) / (stop.wallNanos - start.wallNanos),
              100.0 * (stop.heartbeatCpu - start.heartbeatCpu) / (stop.wallNanos - start.wallNanos),
              100.0 * (stop.redissonCpu - start.redissonCpu) / (stop.wallNanos - start.wallNanos),
              (stop.evalShaCalls - start.evalShaCalls) / seconds,
              (stop.serverCommands - start.serverCommands) / seconds);
      releaseAll(leases);
      return result;
    }
  }

  private static List<Lease> acquireAll(RedisLeaseManager manager, LeaseRequest request, int count)
      throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<Lease>>> parts = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        parts.add(
            pool.submit(
                () -> {
                  List<Lease> mine = new ArrayList<>();
                  for (int i = thread; i < count; i += threads) {
                    mine.add(manager.acquire("lease-" + i, request));
                  }
                  return mine;
                }));
      }
      List<Lease> all = new ArrayList<>(count);
      for (Future<List<Lease>> part : parts) {
        all.addAll(part.get());
      }
      return all;
    } finally {
      pool.shutdown();
    }
  }

  static void releaseAll(List<Lease> leases) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (Lease lease : leases) {
        done.add(pool.submit(lease::close));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
  }

  /** Counts the lock keys still present and the smallest remaining TTL. */
  private static long[] ttls(Env env, String prefix, int count) {
    RBatch batch = env.redisson.createBatch();
    List<RFuture<Long>> futures = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      futures.add(
          batch
              .<String>getBucket(prefix + "{lease-" + i + "}:lock", StringCodec.INSTANCE)
              .remainTimeToLiveAsync());
    }
    batch.execute();
    long missing = 0;
    long minTtl = Long.MAX_VALUE;
    for (RFuture<Long> f : futures) {
      long ttl = f.toCompletableFuture().join();
      if (ttl <= 0) {
        missing++;
      } else {
        minTtl = Math.min(minTtl, ttl);
      }
    }
    return new long[] {missing, minTtl == Long.MAX_VALUE ? 0 : minTtl};
  }

  /** Process CPU, in percent of one core, while nothing runs. */
  private static double cpuPercent(Duration window) throws InterruptedException {
    long cpu0 = processCpuNanos();
    long t0 = System.nanoTime();
    Thread.sleep(window.toMillis());
    return 100.0 * (processCpuNanos() - cpu0) / (System.nanoTime() - t0);
  }

  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** CPU time of the live threads whose names start with {@code prefix}. */
  private static Map<Long, Long> threadCpu(String... prefixes) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<Long, Long> cpu = new HashMap<>();
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      for (String prefix : prefixes) {
        if (thread.getName().startsWith(prefix)) {
          cpu.put(thread.getId(), threads.getThreadCpuTime(thread.getId()));
        }
      }
    }
    return cpu;
  }

  private static long sum(Map<Long, Long> cpu) {
    return cpu.values().stream().mapToLong(v -> Math.max(0, v)).sum();
  }

  /** Counters at one moment. */
  private record Snapshot(
      long wallNanos,
      long processCpu,
      long heartbeatCpu,
      long redissonCpu,
      long renewals,
      long evalShaCalls,
      long serverCommands) {

    static Snapshot take(Env env, Counting observer) {
      Map<String, String> stats =
          env.redisson
              .getRedisNodes(RedisNodes.SINGLE)
              .getInstance()
              .info(RedisNode.InfoSection.ALL);
      return new Snapshot(
          System.nanoTime(),
          processCpuNanos(),
          sum(threadCpu("fencing-heartbeat")),
          sum(threadCpu("redisson-netty", "redisson-")),
          observer.renewals.get(),
          calls(stats.get("cmdstat_evalsha")),
          Long.parseLong(stats.getOrDefault("total_commands_processed", "0")));
    }

    private static long calls(String commandStats) {
      if (commandStats == null) {
        return 0;
      }
      for (String part : commandStats.split(",")) {
        if (part.startsWith("calls=")) {
          return Long.parseLong(part.substring("calls=".length()));
        }
      }
      return 0;
    }
  }

  /** Counts renewals and losses, and the longest gap between two renewals of each lease. */
  private static final class Counting implements LeaseObserver {
    final AtomicLong renewals = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong lost = new AtomicLong();
    final Map<Lease, long[]> times = new ConcurrentHashMap<>();

    @Override
    public void onAcquired(Lease lease) {
      times.put(lease, new long[] {System.nanoTime(), 0});
    }

    @Override
    public void onRenewed(Lease lease) {
      renewals.incrementAndGet();
      long[] t = times.get(lease);
      if (t != null) {
        long now = System.nanoTime();
        synchronized (t) {
          t[1] = Math.max(t[1], now - t[0]);
          t[0] = now;
        }
      }
    }

    @Override
    public void onRenewalFailed(Lease lease, Throwable failure) {
      failures.incrementAndGet();
    }

    @Override
    public void onLost(Lease lease, LossReason reason) {
      lost.incrementAndGet();
    }

    @Override
    public void onReleased(Lease lease, boolean deleted) {
      times.remove(lease);
    }
  }
}
