package dev.fencing.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A small closed-loop harness: every variant of a group runs with the same number of threads, once
 * for warm-up, then in several rounds in a shuffled order, so slow drift on a shared machine hits
 * every variant alike and no variant always runs after the same other one. Ratios are taken per
 * round (variants measured seconds apart) and the median over rounds is reported.
 */
final class Harness {

  /** One thread's operation; {@link #close()} runs after the measurement. */
  interface ThreadOp extends AutoCloseable {
    void run() throws Exception;

    @Override
    default void close() throws Exception {}
  }

  /** Opens the per-thread operation of a variant. */
  @FunctionalInterface
  interface OpFactory {
    ThreadOp open(int thread) throws Exception;
  }

  /** A variant of a group: what it is called, and how a thread runs it. */
  record Variant(String name, OpFactory factory) {}

  /** How long to run. */
  record Timing(long warmupMillis, int rounds, long roundMillis) {}

  /** The measurements of one variant. */
  record VariantResult(String name, double[] opsPerSecond, long[] sortedLatencyNanos) {
    double medianOps() {
      return median(opsPerSecond);
    }

    double minOps() {
      return Arrays.stream(opsPerSecond).min().orElse(Double.NaN);
    }

    double maxOps() {
      return Arrays.stream(opsPerSecond).max().orElse(Double.NaN);
    }

    double percentileMicros(double p) {
      if (sortedLatencyNanos.length == 0) {
        return Double.NaN;
      }
      int index =
          (int)
              Math.min(sortedLatencyNanos.length - 1, Math.ceil(p * sortedLatencyNanos.length) - 1);
      return sortedLatencyNanos[Math.max(0, index)] / 1_000.0;
    }
  }

  /** The measurements of a group. */
  record GroupResult(String group, int threads, List<VariantResult> variants) {
    VariantResult variant(String name) {
      return variants.stream()
          .filter(v -> v.name().equals(name))
          .findFirst()
          .orElseThrow(() -> new IllegalArgumentException("no variant " + name + " in " + group));
    }

    /** The median over rounds of {@code a/b}, both measured in the same round. */
    double ratio(String a, String b) {
      double[] x = variant(a).opsPerSecond();
      double[] y = variant(b).opsPerSecond();
      double[] r = new double[x.length];
      for (int i = 0; i < x.length; i++) {
        r[i] = x[i] / y[i];
      }
      return median(r);
    }
  }

  private Harness() {}

  static GroupResult run(String group, int threads, Timing timing, List<Variant> variants)
      throws Exception {
    int n = variants.size();
    double[][] ops = new double[n][timing.rounds()];
    List<List<long[]>> latencies = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      latencies.add(new ArrayList<>());
    }
    for (int i = 0; i < n; i++) {
      measure(variants.get(i), threads, timing.warmupMillis(), null);
    }
    for (int round = 0; round < timing.rounds(); round++) {
      for (int i : order(n, round)) {
        ops[i][round] = measure(variants.get(i), threads, timing.roundMillis(), latencies.get(i));
      }
    }
    List<VariantResult> results = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] all = latencies.get(i).stream().flatMapToLong(Arrays::stream).toArray();
      Arrays.sort(all);
      results.add(new VariantResult(variants.get(i).name(), ops[i], all));
    }
    return new GroupResult(group, threads, results);
  }

  /**
   * The order of the variants in a round: shuffled, seeded by the round so that a run can be
   * repeated. A rotation would leave every variant behind the same predecessor in every round, and
   * what a variant leaves in the database (row versions, the fence row's lock state) measurably
   * slowed or sped up the one after it.
   */
  static List<Integer> order(int variants, int round) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < variants; i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(1_000L + round));
    return order;
  }

  /** Runs one variant for {@code millis}; returns operations per second. */
  private static double measure(Variant variant, int threads, long millis, List<long[]> latencySink)
      throws Exception {
    ThreadOp[] ops = new ThreadOp[threads];
    for (int t = 0; t < threads; t++) {
      ops[t] = variant.factory().open(t);
    }
    CyclicBarrier start = new CyclicBarrier(threads + 1);
    long[] counts = new long[threads];
    long[] finished = new long[threads];
    LongBuffer[] samples = new LongBuffer[threads];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long[] window = new long[2];
    Thread[] workers = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int thread = t;
      samples[t] = new LongBuffer();
      workers[t] =
          new Thread(
              () -> {
                try {
                  start.await();
                  long deadline = window[1];
                  ThreadOp op = ops[thread];
                  LongBuffer sample = samples[thread];
                  long count = 0;
                  long now = System.nanoTime();
                  while (now - deadline < 0 && failure.get() == null) {
                    op.run();
                    long after = System.nanoTime();
                    sample.add(after - now);
                    now = after;
                    count++;
                  }
                  counts[thread] = count;
                  finished[thread] = now;
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "bench-" + variant.name() + "-" + t);
      workers[t].start();
    }
    window[0] = System.nanoTime();
    window[1] = window[0] + millis * 1_000_000L;
    start.await();
    for (Thread worker : workers) {
      worker.join();
    }
    for (ThreadOp op : ops) {
      op.close();
    }
    if (failure.get() != null) {
      throw new IllegalStateException(
          "variant " + variant.name() + " failed: " + failure.get(), failure.get());
    }
    double perSecond = 0;
    for (int t = 0; t < threads; t++) {
      perSecond += counts[t] / ((finished[t] - window[0]) / 1e9);
    }
    if (latencySink != null) {
      for (LongBuffer sample : samples) {
        latencySink.add(sample.toArray());
      }
    }
    return perSecond;
  }

  static double median(double[] values) {
    double[] copy = values.clone();
    Arrays.sort(copy);
    int n = copy.length;
    if (n == 0) {
      return Double.NaN;
    }
    return n % 2 == 1 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
  }

  /** A growable array of longs. */
  private static final class LongBuffer {
    private long[] values = new long[4096];
    private int size;

    void add(long value) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = value;
    }

    long[] toArray() {
      return Arrays.copyOf(values, size);
    }
  }
}
