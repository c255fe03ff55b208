package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.redisson.api.RBucket;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.client.codec.StringCodec;

/**
 * Contended hand-off: a holder releases while another thread already waits in {@code acquire}. One
 * sample is the time from the holder's release call to the waiter holding the lock. Two threads
 * pass one lock back and forth: each, once it holds, waits until the other announced that it is
 * about to wait, gives it {@link #HEAD_START_MILLIS} to be inside its acquire (subscribed), then
 * releases. A Redis round trip (a {@code GET} through the same client, back to back) is the
 * reference, and the floor is the release's own round trip after the same pause: a hand-off whose
 * fresh token comes from the release script cannot reach the waiter before that answer.
 *
 * <p>Fairness: a holder, three waiters that start waiting {@link #HEAD_START_MILLIS} apart, then
 * the release; a trial counts whether the longest waiter got the lock first.
 */
final class HandoffBench {

  static final String FENCING = "fencing RedisLeaseManager";
  static final String RLOCK = "Redisson RLock";
  static final String RFENCED = "Redisson RFencedLock";
  static final String REDIS_RTT = "Redis round trip (GET)";
  static final String RELEASE_ALONE = "floor: the release script alone, after the same pause";

  static final long HEAD_START_MILLIS = 3;
  private static final int FAIRNESS_WAITERS = 3;

  /** One thread's lock, as the benchmark uses it. */
  interface Lock {
    void lock() throws Exception;

    void unlock() throws Exception;
  }

  /** Makes the lock of one thread; both threads of a variant lock the same resource. */
  @FunctionalInterface
  interface LockFactory {
    Lock open(String resource);
  }

  record Variant(String name, LockFactory factory) {}

  /**
   * Per variant: hand-off latencies (sorted, ns), and fairness trials won by the longest waiter.
   */
  record VariantResult(String name, long[] sortedNanos, int fairTrials, int longestWaiterWon) {
    double percentileMicros(double p) {
      if (sortedNanos.length == 0) {
        return Double.NaN;
      }
      int index = (int) Math.min(sortedNanos.length - 1, Math.ceil(p * sortedNanos.length) - 1);
      return sortedNanos[Math.max(0, index)] / 1_000.0;
    }
  }

  record Result(List<VariantResult> variants) {
    VariantResult variant(String name) {
      return variants.stream().filter(v -> v.name().equals(name)).findFirst().orElseThrow();
    }
  }

  private HandoffBench() {}

  static Result run(Env env, Harness.Timing timing) throws Exception {
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(env.prefix + "handoff:");
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10));
    RBucket<String> bucket =
        env.redisson.getBucket(env.prefix + "handoff-rtt", StringCodec.INSTANCE);
    bucket.set("x");
    try (RedisLeaseManager leases = RedisLeaseManager.create(env.redisson, options)) {
      List<Variant> variants =
          List.of(
              new Variant(
                  FENCING,
                  resource -> {
                    Lease[] held = new Lease[1];
                    return new Lock() {
                      @Override
                      public void lock() {
                        held[0] = leases.acquire(resource, request);
                      }

                      @Override
                      public void unlock() {
                        held[0].close();
                      }
                    };
                  }),
              new Variant(
                  RLOCK,
                  resource -> {
                    RLock lock = env.redisson.getLock(env.prefix + "handoff-rlock:" + resource);
                    return new Lock() {
                      @Override
                      public void lock() {
                        lock.lock();
                      }

                      @Override
                      public void unlock() {
                        lock.unlock();
                      }
                    };
                  }),
              new Variant(
                  RFENCED,
                  resource -> {
                    RFencedLock lock =
                        env.redisson.getFencedLock(env.prefix + "handoff-rfenced:" + resource);
                    return new Lock() {
                      @Override
                      public void lock() {
                        if (lock.lockAndGetToken() == null) {
                          throw new IllegalStateException("no token");
                        }
                      }

                      @Override
                      public void unlock() {
                        lock.unlock();
                      }
                    };
                  }));
      int n = variants.size() + 2;
      List<List<long[]>> samples = new ArrayList<>();
      int[] trials = new int[n];
      int[] won = new int[n];
      for (int i = 0; i < n; i++) {
        samples.add(new ArrayList<>());
      }
      int[] sequence = {0};
      for (int i = 0; i < variants.size(); i++) {
        handoffs(variants.get(i), "warm" + i, timing.warmupMillis());
      }
      for (int round = 0; round < timing.rounds(); round++) {
        for (int i : Harness.order(n, round)) {
          if (i == variants.size()) {
            samples.get(i).add(roundTrips(bucket, timing.roundMillis()));
            continue;
          }
          if (i == variants.size() + 1) {
            samples.get(i).add(releasesAlone(leases, request, "a" + sequence[0]++, timing));
            continue;
          }
          Variant variant = variants.get(i);
          samples.get(i).add(handoffs(variant, "r" + sequence[0]++, timing.roundMillis()));
          int[] fair = fairness(variant, "f" + sequence[0]++, 3);
          trials[i] += fair[0];
          won[i] += fair[1];
        }
      }
      List<VariantResult> results = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        long[] all = samples.get(i).stream().flatMapToLong(Arrays::stream).toArray();
        Arrays.sort(all);
        String name =
            i == variants.size()
                ? REDIS_RTT
                : i == variants.size() + 1 ? RELEASE_ALONE : variants.get(i).name();
        results.add(new VariantResult(name, all, trials[i], won[i]));
      }
      return new Result(results);
    } finally {
      bucket.delete();
    }
  }

  /**
   * The floor: a holder that nobody waits for pauses as the hand-off's holder does, then releases;
   * one sample is that release call, the round trip every hand-off through the release script
   * needs.
   */
  private static long[] releasesAlone(
      RedisLeaseManager leases, LeaseRequest request, String resource, Harness.Timing timing)
      throws InterruptedException {
    List<Long> out = new ArrayList<>();
    long deadline = System.nanoTime() + timing.roundMillis() * 1_000_000L;
    while (System.nanoTime() - deadline < 0) {
      Lease lease = leases.acquire(resource, request);
      Thread.sleep(HEAD_START_MILLIS);
      long start = System.nanoTime();
      lease.close();
      out.add(System.nanoTime() - start);
    }
    return out.stream().mapToLong(Long::longValue).toArray();
  }

  private static long[] roundTrips(RBucket<String> bucket, long millis) {
    List<Long> out = new ArrayList<>();
    long deadline = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() - deadline < 0) {
      long start = System.nanoTime();
      bucket.get();
      out.add(System.nanoTime() - start);
    }
    return out.stream().mapToLong(Long::longValue).toArray();
  }

  /**
   * Two threads pass the lock of {@code resource} back and forth for {@code millis}. Exactly one
   * thread waits at a time: a holder releases only once the other announced that it waits, and
   * waits itself only once the other holds (so a releaser never wins its own lock back).
   */
  private static long[] handoffs(Variant variant, String resource, long millis) throws Exception {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    Semaphore[] waiting = {new Semaphore(0), new Semaphore(0)};
    Semaphore[] acquired = {new Semaphore(0), new Semaphore(0)};
    long[] releaseStart = new long[1];
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean stopped = new AtomicBoolean();
    List<Long> out = new ArrayList<>();
    Lock[] locks = {variant.factory().open(resource), variant.factory().open(resource)};
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(2);
    for (int t = 0; t < 2; t++) {
      int me = t;
      int other = 1 - t;
      Thread thread =
          new Thread(
              () -> {
                try {
                  boolean holding = me == 0;
                  if (holding) {
                    locks[me].lock();
                    first.countDown();
                  } else {
                    first.await();
                  }
                  while (true) {
                    if (!holding) {
                      waiting[other].release();
                      locks[me].lock();
                      long now = System.nanoTime();
                      synchronized (out) {
                        out.add(now - releaseStart[0]);
                      }
                      holding = true;
                      if (now - deadline >= 0) {
                        stopped.set(true);
                      }
                      acquired[other].release();
                      if (stopped.get()) {
                        locks[me].unlock();
                        return;
                      }
                    }
                    if (!awaitPermit(waiting[me], failure)) {
                      locks[me].unlock();
                      return;
                    }
                    Thread.sleep(HEAD_START_MILLIS);
                    synchronized (out) {
                      releaseStart[0] = System.nanoTime();
                    }
                    locks[me].unlock();
                    holding = false;
                    if (!awaitPermit(acquired[me], failure) || stopped.get()) {
                      return;
                    }
                  }
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                } finally {
                  done.countDown();
                }
              },
              "handoff-" + variant.name() + "-" + t);
      thread.start();
    }
    if (!done.await(millis + 60_000, TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(variant.name() + ": hand-off threads did not finish");
    }
    if (failure.get() != null) {
      throw new IllegalStateException(variant.name() + " failed: " + failure.get(), failure.get());
    }
    synchronized (out) {
      return out.stream().mapToLong(Long::longValue).toArray();
    }
  }

  /** Waits for a permit; false if the other thread failed meanwhile. */
  private static boolean awaitPermit(Semaphore semaphore, AtomicReference<Throwable> failure)
      throws InterruptedException {
    while (!semaphore.tryAcquire(100, TimeUnit.MILLISECONDS)) {
      if (failure.get() != null) {
        return false;
      }
    }
    return true;
  }

  /** Returns {trials, trials the longest waiter won}. */
  private static int[] fairness(Variant variant, String resource, int trials) throws Exception {
    int won = 0;
    for (int trial = 0; trial < trials; trial++) {
      String name = resource + "-" + trial;
      Lock holder = variant.factory().open(name);
      holder.lock();
      AtomicInteger first = new AtomicInteger(-1);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread[] waiters = new Thread[FAIRNESS_WAITERS];
      for (int w = 0; w < FAIRNESS_WAITERS; w++) {
        int index = w;
        Lock lock = variant.factory().open(name);
        waiters[w] =
            new Thread(
                () -> {
                  try {
                    lock.lock();
                    first.compareAndSet(-1, index);
                    lock.unlock();
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                },
                "fairness-" + index);
        waiters[w].start();
        Thread.sleep(HEAD_START_MILLIS);
      }
      Thread.sleep(HEAD_START_MILLIS);
      holder.unlock();
      for (Thread waiter : waiters) {
        waiter.join(30_000);
      }
      if (failure.get() != null) {
        throw new IllegalStateException(
            variant.name() + " fairness failed: " + failure.get(), failure.get());
      }
      if (first.get() == 0) {
        won++;
      }
    }
    return new int[] {trials, won};
  }
}
