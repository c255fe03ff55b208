package dev.fencing.core.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseManagerClosedException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LeaseUnavailableException;
import dev.fencing.core.LossReason;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of leases on any {@link LeaseStore}: acquiring and waiting, the heartbeat sweep that
 * renews held leases and detects their loss, loss listeners, release, and close.
 *
 * <p>The sweep runs on one heartbeat thread per manager and never calls user code: listeners and
 * observer callbacks about renewals and losses run on a separate event thread, each guarded, so
 * nothing they throw can stop the heartbeat or another listener.
 */
public final class LeaseLifecycle implements LeaseManager {

  private static final Logger log = LoggerFactory.getLogger(LeaseLifecycle.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final long MIN_SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long MAX_SWEEP_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final LeaseStore store;
  private final LeaseOptions options;
  private final LeaseObserver observer;
  private final Ticker ticker;
  private final Executor events;
  private final ExecutorService ownedEvents;
  private final Thread heartbeat;
  private final Set<ManagedLease> held = ConcurrentHashMap.newKeySet();
  // Acquisitions of this manager waiting in a queue, by lease id: a release by this manager that
  // hands the lock to one of them tells it directly (the store's pub/sub tells everyone else).
  private final Map<String, Waiter> waiting = new ConcurrentHashMap<>();
  private final Object wake = new Object();
  private boolean wakeRequested;
  // Guarded by wake: whether the heartbeat is sweeping, and when it will sweep next otherwise. An
  // acquisition wakes the heartbeat only if its lease needs attention before that.
  private boolean sweeping = true;
  private long nextSweepAt;
  private volatile boolean closed;

  private LeaseLifecycle(
      LeaseStore store,
      LeaseOptions options,
      LeaseObserver observer,
      Ticker ticker,
      Executor events,
      ExecutorService ownedEvents,
      boolean startHeartbeat) {
    this.store = Objects.requireNonNull(store, "store");
    this.options = Objects.requireNonNull(options, "options");
    this.observer = Objects.requireNonNull(observer, "observer");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.events = Objects.requireNonNull(events, "events");
    this.ownedEvents = ownedEvents;
    if (startHeartbeat) {
      heartbeat = new Thread(this::runHeartbeat, "fencing-heartbeat");
      heartbeat.setDaemon(true);
      heartbeat.start();
    } else {
      heartbeat = null;
    }
  }

  /**
   * Creates a lifecycle with its own heartbeat thread and event thread, on the system clock.
   *
   * @param store the store
   * @param options the options
   * @param observer the observer
   * @return the running lifecycle
   */
  public static LeaseLifecycle start(
      LeaseStore store, LeaseOptions options, LeaseObserver observer) {
    ExecutorService events =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "fencing-lease-events");
              thread.setDaemon(true);
              return thread;
            });
    return new LeaseLifecycle(store, options, observer, Ticker.SYSTEM, events, events, true);
  }

  /**
   * Creates a lifecycle without a heartbeat thread, for deterministic tests: the caller moves the
   * {@code ticker} and calls {@link #sweep()}; listeners run on {@code events}.
   *
   * @param store the store
   * @param options the options
   * @param observer the observer
   * @param ticker the clock
   * @param events where listeners and observer callbacks run
   * @return the lifecycle
   */
  public static LeaseLifecycle manual(
      LeaseStore store,
      LeaseOptions options,
      LeaseObserver observer,
      Ticker ticker,
      Executor events) {
    return new LeaseLifecycle(store, options, observer, ticker, events, null, false);
  }

  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    Objects.requireNonNull(request, "request");
    return acquireWithin(resource, request)
        .orElseThrow(() -> new LeaseUnavailableException(resource, request.maxWait()));
  }

  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    Objects.requireNonNull(request, "request");
    return acquireWithin(resource, request);
  }

  @Override
  public void advanceTokenFloor(String resource, FencingToken floor) {
    ResourceNames.validate(resource);
    Objects.requireNonNull(floor, "floor");
    String what = "advancing the token counter of \"" + resource + "\"";
    checkOpen(what);
    try {
      await(store.advanceFloor(resource, floor.value()), what, ignored -> {});
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseBackendException(what + ": interrupted", e);
    }
  }

  @Override
  public LeaseOptions options() {
    return options;
  }

  /**
   * Stops the heartbeat, reports every held lease lost with {@link LossReason#MANAGER_CLOSED} and
   * leaves its lock to expire; later acquisitions fail.
   */
  @Override
  public void close() {
    synchronized (wake) {
      if (closed) {
        return;
      }
      closed = true;
      wakeRequested = true;
      wake.notifyAll();
    }
    if (heartbeat != null && heartbeat != Thread.currentThread()) {
      try {
        heartbeat.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (ManagedLease lease : List.copyOf(held)) {
      lease.lose(LossReason.MANAGER_CLOSED);
    }
    waiting.values().forEach(Waiter::wake); // they find the manager closed
    if (ownedEvents != null) {
      ownedEvents.shutdown(); // listeners already queued still run
    }
  }

  /**
   * Looks at every held lease once: reports the ones past their deadline lost, and sends one
   * renewal call for those due. Returns how long to wait before the next sweep.
   *
   * @return nanoseconds until the next lease needs attention
   */
  public long sweep() {
    long now = ticker.nanoTime();
    long next = now + MAX_SWEEP_NANOS;
    List<ManagedLease> due = new ArrayList<>();
    for (ManagedLease lease : held) {
      try {
        long at = lease.sweep(now, due);
        if (at - next < 0) {
          next = at;
        }
      } catch (Throwable e) {
        log.error("heartbeat of {} failed; the sweep goes on", lease, e);
      }
    }
    if (!due.isEmpty()) {
      renew(due, now);
    }
    return Math.max(MIN_SWEEP_NANOS, next - now);
  }

  private void runHeartbeat() {
    while (!closed) {
      synchronized (wake) {
        sweeping = true;
      }
      long waitNanos = MIN_SWEEP_NANOS;
      try {
        waitNanos = sweep();
      } catch (Throwable e) {
        log.error("heartbeat sweep failed; retrying", e);
      }
      synchronized (wake) {
        sweeping = false;
        nextSweepAt = ticker.nanoTime() + waitNanos;
        try {
          if (!wakeRequested && !closed) {
            TimeUnit.NANOSECONDS.timedWait(wake, waitNanos);
          }
        } catch (InterruptedException e) {
          if (closed) {
            return;
          }
        } finally {
          wakeRequested = false;
        }
      }
    }
  }

  /**
   * Makes sure the heartbeat looks at a new lease by {@code dueAt}: wakes it if it is sweeping (the
   * sweep may have passed the lease by) or sleeps beyond that; otherwise its next sweep comes in
   * time, and an acquisition costs no thread wake-up.
   */
  private void wakeHeartbeatBy(long dueAt) {
    synchronized (wake) {
      if (sweeping || dueAt - nextSweepAt < 0) {
        wakeRequested = true;
        wake.notifyAll();
      }
    }
  }

  private void renew(List<ManagedLease> leases, long sentAt) {
    List<LeaseStore.Renewal> renewals = new ArrayList<>(leases.size());
    for (ManagedLease lease : leases) {
      renewals.add(new LeaseStore.Renewal(lease.resource(), lease.value(), lease.leaseMillis()));
    }
    List<CompletableFuture<Boolean>> results;
    try {
      results = store.renew(renewals);
    } catch (RuntimeException e) {
      results = new ArrayList<>();
      for (int i = 0; i < leases.size(); i++) {
        results.add(CompletableFuture.failedFuture(e));
      }
    }
    for (int i = 0; i < leases.size(); i++) {
      ManagedLease lease = leases.get(i);
      results
          .get(i)
          .whenComplete(
              (renewed, failure) -> {
                try {
                  lease.onRenewal(sentAt, renewed, failure);
                } catch (Throwable e) {
                  log.error("handling the renewal of {} failed", lease, e);
                }
              });
    }
  }

  private Optional<Lease> acquireWithin(String resource, LeaseRequest request) {
    ResourceNames.validate(resource);
    String what = "acquiring the lease on \"" + resource + "\"";
    checkOpen(what);
    long start = ticker.nanoTime();
    long maxWaitNanos = request.maxWait().toNanos();
    try {
      ManagedLease lease = attempt(resource, request, what);
      if (lease != null || maxWaitNanos == 0) {
        return Optional.ofNullable(lease);
      }
      return waitInQueue(resource, request, what, start + maxWaitNanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LeaseUnavailableException(resource, e);
    }
  }

  /**
   * Waits for the lock in the resource's queue until {@code deadline}: a release hands it over with
   * a fresh token, and this waiter hears of it from the releaser directly (same manager) or through
   * the store's announcement. A waiter that misses both still asks again once the lock's time is
   * up, so no hand-off or expiry is waited for longer than the lock's remaining time.
   */
  private Optional<Lease> waitInQueue(
      String resource, LeaseRequest request, String what, long deadline)
      throws InterruptedException {
    String leaseId = newLeaseId();
    long leaseMillis = request.leaseTime().toMillis();
    long stayMillis = Math.max(1000, 2 * options.operationTimeout().toMillis());
    Waiter waiter = new Waiter();
    waiting.put(leaseId, waiter);
    LeaseStore.Subscription subscription = null;
    boolean queued = false;
    Lease lease = null;
    try {
      subscription =
          await(
              store.subscribeReleases(
                  resource,
                  (handedTo, token) -> {
                    if (handedTo == null) {
                      waiter.wake();
                    } else if (handedTo.equals(leaseId)) {
                      waiter.announced(token);
                    }
                  }),
              "subscribing to releases of \"" + resource + "\"",
              LeaseStore.Subscription::cancel);
      long queuedSince = 0;
      while (true) {
        checkOpen(what);
        long sentAt = ticker.nanoTime();
        if (!queued) {
          queuedSince = sentAt;
          queued = true;
        }
        long result = queue(resource, leaseId, leaseMillis, stayMillis, what);
        if (result >= 0) {
          lease = hold(resource, result, leaseId, request, sentAt, what);
          return Optional.of(lease);
        }
        long remaining = deadline - ticker.nanoTime();
        if (remaining <= 0) {
          return Optional.empty();
        }
        long untilExpiry = TimeUnit.MILLISECONDS.toNanos(-result);
        Grant grant = waiter.await(Math.min(remaining, untilExpiry));
        if (grant != null) {
          // The hand-off set the lock after this waiter queued, and after the release was sent
          // when the release came from this manager.
          long since =
              grant.direct() && grant.releaseSentAt() - queuedSince > 0
                  ? grant.releaseSentAt()
                  : queuedSince;
          lease = takeHandOff(resource, grant.token(), leaseId, request, since, what);
          if (lease != null) {
            return Optional.of(lease);
          }
        }
        // freed, woken, or the lock's time is up: ask again
      }
    } finally {
      waiting.remove(leaseId);
      if (subscription != null) {
        // off the caller's path: unsubscribing may cost the client a round trip's worth of work
        dispatch("cancelling a release subscription", subscription::cancel);
      }
      if (queued && lease == null) {
        // leave the queue, and pass on a hand-off that came too late
        abandonQuietly(resource, leaseId, leaseMillis);
      }
    }
  }

  private long queue(
      String resource, String leaseId, long leaseMillis, long stayMillis, String what)
      throws InterruptedException {
    CompletableFuture<Long> queued =
        store.acquireOrQueue(resource, leaseId, leaseMillis, stayMillis);
    try {
      return await(queued, what, token -> {});
    } catch (LeaseBackendException | InterruptedException e) {
      queued.whenComplete((token, failure) -> abandonQuietly(resource, leaseId, leaseMillis));
      throw e;
    }
  }

  /**
   * Holds a lock handed over with {@code token}, set no earlier than {@code since}. A hand-off that
   * may be older than half the lease's validity is confirmed first (a renewal), so the lease's
   * deadline never runs ahead of the lock's; returns null when the lock is no longer this waiter's.
   */
  private Lease takeHandOff(
      String resource, long token, String leaseId, LeaseRequest request, long since, String what)
      throws InterruptedException {
    long validity = request.leaseTime().minus(request.safetyMargin()).toNanos();
    if (ticker.nanoTime() - since <= validity / 2) {
      return hold(resource, token, leaseId, request, since, what);
    }
    long sentAt = ticker.nanoTime();
    CompletableFuture<Boolean> renewed =
        store
            .renew(
                List.of(
                    new LeaseStore.Renewal(
                        resource, leaseId + ":" + token, request.leaseTime().toMillis())))
            .get(0);
    return Boolean.TRUE.equals(await(renewed, what, ignored -> {}))
        ? hold(resource, token, leaseId, request, sentAt, what)
        : null;
  }

  /** One acquire script call: the lease if the lock was free, otherwise null. */
  private ManagedLease attempt(String resource, LeaseRequest request, String what)
      throws InterruptedException {
    String leaseId = newLeaseId();
    long leaseMillis = request.leaseTime().toMillis();
    long sentAt = ticker.nanoTime();
    CompletableFuture<Long> acquired = store.acquire(resource, leaseId, leaseMillis);
    long result;
    try {
      result = await(acquired, what, token -> {});
    } catch (LeaseBackendException | InterruptedException e) {
      // The script may still run, or may have run with its answer lost: make sure it holds no lock.
      abandonQuietly(resource, leaseId, leaseMillis);
      acquired.whenComplete((token, failure) -> abandonQuietly(resource, leaseId, leaseMillis));
      throw e;
    }
    return result < 0 ? null : hold(resource, result, leaseId, request, sentAt, what);
  }

  /**
   * Starts looking after a lock this manager now holds, taken or handed over no earlier than
   * sentAt.
   */
  private ManagedLease hold(
      String resource, long token, String leaseId, LeaseRequest request, long sentAt, String what) {
    ManagedLease lease =
        new ManagedLease(this, resource, new FencingToken(token), leaseId, request, sentAt);
    held.add(lease);
    if (closed) {
      held.remove(lease);
      releaseQuietly(resource, lease.value());
      throw new LeaseManagerClosedException(what);
    }
    wakeHeartbeatBy(lease.attentionAt());
    notifyObserver(() -> observer.onAcquired(lease));
    return lease;
  }

  /** Waits for a store call; if the caller gives up, {@code onAbandoned} gets the late result. */
  private <T> T await(CompletableFuture<T> future, String what, Consumer<T> onAbandoned)
      throws InterruptedException {
    try {
      return future.get(options.operationTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      abandon(future, onAbandoned);
      throw new LeaseBackendException(
          what
              + ": "
              + store.describe()
              + " did not answer within "
              + options.operationTimeout()
              + " (operationTimeout)",
          e);
    } catch (ExecutionException e) {
      throw backendFailure(what, e.getCause() == null ? e : e.getCause());
    } catch (InterruptedException e) {
      abandon(future, onAbandoned);
      throw e;
    }
  }

  private static <T> void abandon(CompletableFuture<T> future, Consumer<T> onAbandoned) {
    future.thenAccept(
        late -> {
          try {
            onAbandoned.accept(late);
          } catch (Throwable e) {
            log.warn("cleaning up after an abandoned call failed", e);
          }
        });
  }

  LeaseBackendException backendFailure(String what, Throwable cause) {
    return new LeaseBackendException(
        what + " failed: " + store.describe() + " could not be reached or failed: " + why(cause),
        cause);
  }

  /** The distinct messages along a cause chain, outermost first. */
  static String why(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    Set<String> messages = new LinkedHashSet<>();
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      String message = t.getMessage();
      if (message == null || message.isBlank()) {
        message = t.getClass().getSimpleName();
      }
      boolean known = false;
      for (String earlier : messages) {
        known |= earlier.contains(message);
      }
      if (!known) {
        messages.add(message);
      }
    }
    return String.join("; ", messages);
  }

  boolean releaseBlocking(ManagedLease lease, long keepMillis) throws InterruptedException {
    String value = lease.value();
    String resource = lease.resource();
    return await(
            handingOver(store.release(resource, value, keepMillis)),
            "releasing the lease on \"" + resource + "\"",
            ignored -> {})
        .held();
  }

  void releaseQuietly(String resource, String value) {
    try {
      handingOver(store.release(resource, value, 0))
          .whenComplete(
              (released, failure) -> {
                if (failure != null) {
                  log.debug("could not delete the lock of \"{}\"; it expires", resource, failure);
                }
              });
    } catch (RuntimeException e) {
      log.debug("could not delete the lock of \"{}\"; it expires", resource, e);
    }
  }

  private void abandonQuietly(String resource, String leaseId, long leaseMillis) {
    try {
      handingOver(store.abandon(resource, leaseId, leaseMillis))
          .whenComplete(
              (released, failure) -> {
                if (failure != null) {
                  log.debug("could not clean up an abandoned acquisition of \"{}\"", resource);
                }
              });
    } catch (RuntimeException e) {
      log.debug("could not clean up an abandoned acquisition of \"{}\"", resource, e);
    }
  }

  /**
   * Tells a waiter of this manager that a release just handed it the lock, as soon as the answer
   * arrives (on the thread that completes it); the lock was set after the call was sent.
   */
  private CompletableFuture<LeaseStore.Released> handingOver(
      CompletableFuture<LeaseStore.Released> call) {
    long sentAt = ticker.nanoTime();
    return call.thenApply(
        released -> {
          if (released.handedTo() != null) {
            Waiter waiter = waiting.get(released.handedTo());
            if (waiter != null) {
              waiter.handedOver(released.handedToken(), sentAt);
            }
          }
          return released;
        });
  }

  void forget(ManagedLease lease) {
    held.remove(lease);
  }

  Ticker ticker() {
    return ticker;
  }

  LeaseObserver observer() {
    return observer;
  }

  /** Runs an observer callback on the caller's thread; anything it throws is logged. */
  void notifyObserver(Runnable callback) {
    try {
      callback.run();
    } catch (Throwable e) {
      log.warn("lease observer failed", e);
    }
  }

  /** Runs an observer callback on the event thread, unless there is no observer. */
  void observe(Runnable callback) {
    if (observer != LeaseObserver.NONE) {
      dispatch("lease observer", callback);
    }
  }

  /** Runs user code on the event thread; anything it throws is logged. */
  void dispatch(String what, Runnable callback) {
    Runnable guarded =
        () -> {
          try {
            callback.run();
          } catch (Throwable e) {
            log.warn("{} failed", what, e);
          }
        };
    try {
      events.execute(guarded);
    } catch (RejectedExecutionException e) {
      guarded.run();
    }
  }

  private void checkOpen(String what) {
    if (closed) {
      throw new LeaseManagerClosedException(what);
    }
  }

  private static String newLeaseId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Returns the number of leases the heartbeat looks after (for tests). */
  public int heldCount() {
    return held.size();
  }

  /**
   * A lock handed over with {@code token}: by a release of this manager sent at {@code
   * releaseSentAt} ({@code direct}), or announced by another process (no send time known).
   */
  private record Grant(long token, boolean direct, long releaseSentAt) {}

  /** One queued acquisition: what it hears while it waits. */
  private static final class Waiter {
    private Grant grant;
    private boolean woken;

    /** Handed the lock by a release of this manager, sent at {@code releaseSentAt}. */
    synchronized void handedOver(long token, long releaseSentAt) {
      grant = new Grant(token, true, releaseSentAt);
      notifyAll();
    }

    /** Handed the lock, as announced by another process. */
    synchronized void announced(long token) {
      if (grant == null) {
        grant = new Grant(token, false, 0);
      }
      notifyAll();
    }

    /** The lock was freed, or the manager closed: look again. */
    synchronized void wake() {
      woken = true;
      notifyAll();
    }

    /** Waits up to {@code nanos} for news; returns the hand-off if that was it, else null. */
    synchronized Grant await(long nanos) throws InterruptedException {
      long until = System.nanoTime() + nanos;
      while (grant == null && !woken) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          break;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      Grant handed = grant;
      grant = null;
      woken = false;
      return handed;
    }
  }
}
