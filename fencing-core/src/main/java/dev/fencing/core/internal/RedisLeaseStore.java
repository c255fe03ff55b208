package dev.fencing.core.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseUnavailableException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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

  private final RedissonClient redisson;
  private final RScript script;
  private final LeaseOptions options;
  private final LeaseObserver observer;
  private final ScheduledThreadPoolExecutor heartbeat;
  private final long leaseMillis;

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
    this.heartbeat =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "fencing-heartbeat");
              thread.setDaemon(true);
              return thread;
            });
    this.heartbeat.setRemoveOnCancelPolicy(true);
  }

  /** Returns the options. */
  public LeaseOptions options() {
    return options;
  }

  LeaseObserver observer() {
    return observer;
  }

  ScheduledThreadPoolExecutor heartbeat() {
    return heartbeat;
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
    lease.start();
    notifyObserver(() -> observer.onAcquired(lease));
    return new Attempt(lease, 0);
  }

  CompletableFuture<Long> renew(RedisLease lease) {
    return run(
        Scripts.RENEW,
        lease.keys().lock(),
        List.of(lease.keys().lock()),
        lease.value(),
        Long.toString(leaseMillis));
  }

  boolean release(RedisLease lease) {
    Keys keys = lease.keys();
    long deleted =
        await(
            run(Scripts.RELEASE, keys.lock(), List.of(keys.lock(), keys.channel()), lease.value()),
            "releasing the lease on \"" + lease.resource() + "\"");
    return deleted == 1;
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
    CompletableFuture<Long> bySha =
        script
            .<Long>evalShaAsync(
                routingKey, RScript.Mode.READ_WRITE, lua.sha(), RScript.ReturnType.LONG, keys, args)
            .toCompletableFuture();
    return bySha
        .handle(
            (value, failure) -> {
              if (failure == null) {
                return CompletableFuture.completedFuture(value);
              }
              if (isNoScript(failure)) {
                return script
                    .<Long>evalAsync(
                        routingKey,
                        RScript.Mode.READ_WRITE,
                        lua.source(),
                        RScript.ReturnType.LONG,
                        keys,
                        args)
                    .toCompletableFuture();
              }
              return CompletableFuture.<Long>failedFuture(failure);
            })
        .thenCompose(future -> future);
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
