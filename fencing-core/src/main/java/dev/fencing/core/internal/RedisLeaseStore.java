package dev.fencing.core.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseUnavailableException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Redis side of leases: runs the scripts, waits for releases, owns the heartbeat thread. */
public final class RedisLeaseStore {

  private static final Logger log = LoggerFactory.getLogger(RedisLeaseStore.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int MAX_RENEWALS_PER_CALL = 500;

  private final RedissonClient redisson;
  private final RScript script;
  private final LeaseOptions options;
  private final LeaseObserver observer;
  private final ScheduledThreadPoolExecutor heartbeat;
  private final Set<RedisLease> held = ConcurrentHashMap.newKeySet();
  private final long leaseMillis;
  private final boolean cluster;

  /**
   * Creates the store and starts its heartbeat thread.
   *
   * @param redisson the client
   * @param options the options
   * @param observer the observer
   */
  public RedisLeaseStore(RedissonClient redisson, LeaseOptions options, LeaseObserver observer) {
    this.redisson = redisson;
    this.script = redisson.getScript(StringCodec.INSTANCE);
    this.options = options;
    this.observer = observer;
    this.leaseMillis = options.leaseTime().toMillis();
    this.cluster = redisson.getConfig().isClusterConfig();
    this.heartbeat =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "fencing-heartbeat");
              thread.setDaemon(true);
              return thread;
            });
    long tick = sweepIntervalNanos(options);
    this.heartbeat.scheduleAtFixedRate(this::sweep, tick, tick, TimeUnit.NANOSECONDS);
  }

  /**
   * How often the heartbeat thread looks at the held leases: a quarter of the renewal interval, and
   * at most half the safety margin, so a lease whose renewals fail is reported lost before its lock
   * can expire on the server.
   */
  static long sweepIntervalNanos(LeaseOptions options) {
    long tick = options.renewInterval().toNanos() / 4;
    long margin = options.safetyMargin().toNanos();
    if (margin > 0) {
      tick = Math.min(tick, margin / 2);
    }
    return Math.max(tick, TimeUnit.MILLISECONDS.toNanos(1));
  }

  private void sweep() {
    long now = System.nanoTime();
    Map<Integer, List<RedisLease>> dueBySlot = new HashMap<>();
    for (RedisLease lease : held) {
      try {
        if (lease.dueForRenewal(now)) {
          int slot = cluster ? Slots.of(lease.resource()) : 0;
          dueBySlot.computeIfAbsent(slot, any -> new ArrayList<>()).add(lease);
        }
      } catch (RuntimeException e) {
        log.warn("heartbeat of {} failed", lease, e);
      }
    }
    for (List<RedisLease> due : dueBySlot.values()) {
      for (int from = 0; from < due.size(); from += MAX_RENEWALS_PER_CALL) {
        renew(due.subList(from, Math.min(due.size(), from + MAX_RENEWALS_PER_CALL)), now);
      }
    }
  }

  /** Renews leases whose keys share one hash slot, in one script call. */
  private void renew(List<RedisLease> leases, long sentAt) {
    List<Object> keys = new ArrayList<>(leases.size());
    Object[] args = new Object[leases.size() + 1];
    args[0] = Long.toString(leaseMillis);
    for (int i = 0; i < leases.size(); i++) {
      keys.add(leases.get(i).keys().lock());
      args[i + 1] = leases.get(i).value();
    }
    List<RedisLease> batch = List.copyOf(leases);
    this.<List<Object>>run(
            Scripts.RENEW_MANY, (String) keys.get(0), keys, RScript.ReturnType.LIST, args)
        .whenCompleteAsync(
            (renewed, failure) -> {
              for (int i = 0; i < batch.size(); i++) {
                Long one = failure == null ? ((Number) renewed.get(i)).longValue() : null;
                batch.get(i).onRenewal(sentAt, one, failure);
              }
            },
            heartbeat);
  }

  void forget(RedisLease lease) {
    held.remove(lease);
  }

  /** Returns the options. */
  public LeaseOptions options() {
    return options;
  }

  LeaseObserver observer() {
    return observer;
  }

  /** Acquires, waiting up to {@code maxWait}. */
  public Lease acquire(String resource, Duration maxWait) {
    ResourceNames.validate(resource);
    Objects.requireNonNull(maxWait, "maxWait");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must not be negative, got " + maxWait);
    }
    long deadline = System.nanoTime() + maxWait.toNanos();
    Attempt attempt = attempt(resource);
    if (attempt.lease() != null) {
      return attempt.lease();
    }
    if (maxWait.isZero()) {
      throw new LeaseUnavailableException(resource, maxWait);
    }
    Semaphore released = new Semaphore(0);
    RTopic topic = redisson.getTopic(keys(resource).channel(), StringCodec.INSTANCE);
    Integer listener =
        await(
            topic.addListenerAsync(String.class, (channel, message) -> released.release()),
            "subscribing to releases of \"" + resource + "\"");
    try {
      while (true) {
        attempt = attempt(resource);
        if (attempt.lease() != null) {
          return attempt.lease();
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          throw new LeaseUnavailableException(resource, maxWait);
        }
        long untilExpiry = TimeUnit.MILLISECONDS.toNanos(attempt.remainingTtlMillis() + 1);
        if (released.tryAcquire(Math.min(remaining, untilExpiry), TimeUnit.NANOSECONDS)) {
          released.drainPermits();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseUnavailableException(resource, e);
    } finally {
      topic.removeListenerAsync(listener);
    }
  }

  /** Acquires if free now. */
  public Optional<Lease> tryAcquire(String resource) {
    ResourceNames.validate(resource);
    return Optional.ofNullable(attempt(resource).lease());
  }

  /** Raises the token counter to at least {@code floor}. */
  public void advanceTokenFloor(String resource, FencingToken floor) {
    ResourceNames.validate(resource);
    Objects.requireNonNull(floor, "floor");
    Keys keys = keys(resource);
    await(
        run(Scripts.ADVANCE_FLOOR, keys.counter(), List.of(keys.counter()), floor.toString()),
        "advancing the token counter of \"" + resource + "\"");
  }

  /** Stops the heartbeat. */
  public void close() {
    heartbeat.shutdownNow();
  }

  private Attempt attempt(String resource) {
    Keys keys = keys(resource);
    String leaseId = newLeaseId();
    long sentAt = System.nanoTime();
    long result =
        await(
            run(
                Scripts.ACQUIRE,
                keys.lock(),
                List.of(keys.lock(), keys.counter()),
                leaseId,
                Long.toString(leaseMillis)),
            "acquiring the lease on \"" + resource + "\"");
    if (result < 0) {
      return new Attempt(null, -result - 1);
    }
    RedisLease lease =
        new RedisLease(this, keys, resource, new FencingToken(result), leaseId, sentAt);
    held.add(lease);
    notifyObserver(() -> observer.onAcquired(lease));
    return new Attempt(lease, 0);
  }

  boolean release(RedisLease lease) {
    return await(releaseAsync(lease), "releasing the lease on \"" + lease.resource() + "\"") == 1;
  }

  CompletableFuture<Long> releaseAsync(RedisLease lease) {
    Keys keys = lease.keys();
    return run(Scripts.RELEASE, keys.lock(), List.of(keys.lock(), keys.channel()), lease.value());
  }

  void notifyObserver(Runnable callback) {
    try {
      callback.run();
    } catch (RuntimeException e) {
      log.warn("lease observer failed", e);
    }
  }

  private CompletableFuture<Long> run(
      Scripts.Script lua, String routingKey, List<Object> keys, Object... args) {
    return run(lua, routingKey, keys, RScript.ReturnType.LONG, args);
  }

  private <T> CompletableFuture<T> run(
      Scripts.Script lua,
      String routingKey,
      List<Object> keys,
      RScript.ReturnType returnType,
      Object... args) {
    return script
        .<T>evalShaAsync(routingKey, RScript.Mode.READ_WRITE, lua.sha(), returnType, keys, args)
        .toCompletableFuture()
        .exceptionallyCompose(
            failure ->
                isNoScript(failure)
                    ? script
                        .<T>evalAsync(
                            routingKey,
                            RScript.Mode.READ_WRITE,
                            lua.source(),
                            returnType,
                            keys,
                            args)
                        .toCompletableFuture()
                    : CompletableFuture.failedFuture(failure));
  }

  private static boolean isNoScript(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null && message.contains("NOSCRIPT")) {
        return true;
      }
    }
    return false;
  }

  private <T> T await(java.util.concurrent.CompletionStage<T> stage, String what) {
    CompletableFuture<T> future = stage.toCompletableFuture();
    try {
      return future.get(options.operationTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      future.cancel(false);
      throw new LeaseBackendException(
          what + ": Redis did not answer within " + options.operationTimeout(), e);
    } catch (ExecutionException | CompletionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new LeaseBackendException(what + " failed: " + cause.getMessage(), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseBackendException(what + ": interrupted", e);
    }
  }

  private Keys keys(String resource) {
    String base = options.keyPrefix() + "{" + resource + "}:";
    return new Keys(base + "lock", base + "token", base + "released");
  }

  private static String newLeaseId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  long leaseNanos() {
    return TimeUnit.MILLISECONDS.toNanos(leaseMillis);
  }

  /** The Redis keys of one resource, all in one hash slot. */
  record Keys(String lock, String counter, String channel) {}

  private record Attempt(RedisLease lease, long remainingTtlMillis) {}
}
