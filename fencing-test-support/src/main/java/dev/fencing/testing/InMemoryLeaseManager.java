package dev.fencing.testing;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import dev.fencing.core.internal.InMemoryLeaseStore;
import dev.fencing.core.internal.LeaseLifecycle;
import dev.fencing.core.internal.ResourceNames;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LeaseManager} in this JVM's memory, for tests that need leases without a Redis server.
 * It runs the same lease lifecycle as {@link dev.fencing.core.RedisLeaseManager} (acquisition and
 * waiting, renewals on a heartbeat thread, loss detection, listeners on an event thread, release,
 * close) on a store with the same semantics as the Redis scripts, and passes the same {@link
 * LeaseManagerContract}. Time is judged by a {@link SettableClock} the test can move forward.
 *
 * <p>Register its leases in a database fence as with Redis: {@code new FencedLeaseManager(
 * InMemoryLeaseManager.create(), fencedDataSource.fence())}.
 *
 * <p>Test controls stage what a Redis deployment does to its clients:
 *
 * <ul>
 *   <li>{@link #expireNow(String)}: the lock expires on the server while its holder is paused; the
 *       holder is not told and learns it at its next renewal;
 *   <li>{@link #handOutDuplicateToken(String)}: the next acquisition gets the last token again, as
 *       after a fail-over to a replica that missed the last increment;
 *   <li>{@link #loseCounter(String)}: the token counter is gone, as after a restart without
 *       persistence;
 *   <li>{@link #setUnreachable(boolean)}: every call fails as if the server were down.
 * </ul>
 *
 * <p>Leases and tokens live in this manager's in-memory "server", shared only with the managers
 * made by {@link #anotherInstance}; they are gone when the test ends.
 */
public final class InMemoryLeaseManager implements LeaseManager {

  private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final SettableClock clock;
  private final InMemoryLeaseStore store;
  private final LeaseLifecycle lifecycle;
  private final ExecutorService events;
  private final Thread heartbeat;
  private final Runnable sweepNow = this::wakeHeartbeat;
  private final Object wake = new Object();
  private boolean wakeRequested;
  private volatile boolean closed;

  private InMemoryLeaseManager(
      LeaseOptions options, LeaseObserver observer, SettableClock clock, InMemoryLeaseStore store) {
    this.clock = clock;
    this.store = store;
    this.events =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "fencing-in-memory-lease-events");
              thread.setDaemon(true);
              return thread;
            });
    this.lifecycle =
        LeaseLifecycle.manual(
            store, options, new WakingObserver(observer), clock::nanoTime, events);
    this.heartbeat = new Thread(this::runHeartbeat, "fencing-in-memory-heartbeat");
    heartbeat.setDaemon(true);
    heartbeat.start();
    clock.onAdvance(sweepNow);
  }

  /**
   * Creates a manager with the default options, no observer and a clock of its own.
   *
   * @return the manager
   */
  public static InMemoryLeaseManager create() {
    return create(LeaseOptions.defaults(), LeaseObserver.NONE, SettableClock.create());
  }

  /**
   * Creates a manager with the default options and no observer, on {@code clock}.
   *
   * @param clock the clock leases judge time by
   * @return the manager
   * @throws NullPointerException if {@code clock} is null
   */
  public static InMemoryLeaseManager create(SettableClock clock) {
    return create(LeaseOptions.defaults(), LeaseObserver.NONE, clock);
  }

  /**
   * Creates a manager.
   *
   * @param options the options (the key prefix is accepted and unused)
   * @param observer the observer of acquisitions, renewals, losses and releases
   * @param clock the clock leases judge time by
   * @return the manager
   * @throws NullPointerException if an argument is null
   */
  public static InMemoryLeaseManager create(
      LeaseOptions options, LeaseObserver observer, SettableClock clock) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(observer, "observer");
    Objects.requireNonNull(clock, "clock");
    return new InMemoryLeaseManager(
        options, observer, clock, new InMemoryLeaseStore(clock::nanoTime));
  }

  /**
   * Returns another manager on the same in-memory server and clock, as a second instance of the
   * application would have: both see the same locks and token counters, and the test controls of
   * either act on both. Each manager is closed on its own.
   *
   * @param options the options of the new manager
   * @param observer its observer
   * @return the new manager
   * @throws NullPointerException if an argument is null
   */
  public InMemoryLeaseManager anotherInstance(LeaseOptions options, LeaseObserver observer) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(observer, "observer");
    return new InMemoryLeaseManager(options, observer, clock, store);
  }

  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    return lifecycle.acquire(resource, request);
  }

  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    return lifecycle.tryAcquire(resource, request);
  }

  @Override
  public void advanceTokenFloor(String resource, FencingToken floor) {
    lifecycle.advanceTokenFloor(resource, floor);
  }

  @Override
  public LeaseOptions options() {
    return lifecycle.options();
  }

  /** {@return the clock this manager's leases judge time by} */
  public SettableClock clock() {
    return clock;
  }

  /**
   * Moves this manager's clock forward by {@code amount} and looks at every held lease at once;
   * shorthand for {@code clock().advance(amount)}.
   *
   * @param amount how far to jump
   * @throws NullPointerException if {@code amount} is null
   * @throws IllegalArgumentException if {@code amount} is negative
   */
  public void advance(Duration amount) {
    clock.advance(amount);
  }

  /**
   * Expires the lock of {@code resource} now, as the server does when its holder was paused past
   * its lease time: another holder can acquire it at once, while the paused holder still believes
   * it holds the lease until its next renewal finds the lock gone ({@link LossReason#TAKEN_OVER}).
   * A {@linkplain LeaseRequest#withoutRenewal() non-renewing} holder never finds out before its
   * lease time ends.
   *
   * @param resource the resource
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public void expireNow(String resource) {
    ResourceNames.validate(resource);
    store.breakLock(resource);
  }

  /**
   * Makes the next acquisition of {@code resource} get the token handed out last once more, as
   * after a fail-over to a replica that missed the last increment. A {@code FencedLeaseManager}
   * detects it at registration and recovers. Does nothing if no token was handed out yet.
   *
   * @param resource the resource
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public void handOutDuplicateToken(String resource) {
    ResourceNames.validate(resource);
    synchronized (store) {
      store.setCounter(resource, store.counter(resource) - 1);
    }
  }

  /**
   * Forgets the token counter of {@code resource}, as Redis does when it restarts without
   * persistence: the next token is 1 again.
   *
   * @param resource the resource
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public void loseCounter(String resource) {
    ResourceNames.validate(resource);
    store.setCounter(resource, 0);
  }

  /**
   * Returns the last token handed out for {@code resource}, or empty if none was (or the counter
   * was lost).
   *
   * @param resource the resource
   * @return the last token
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public Optional<FencingToken> lastToken(String resource) {
    ResourceNames.validate(resource);
    long counter = store.counter(resource);
    return counter > 0 ? Optional.of(FencingToken.of(counter)) : Optional.empty();
  }

  /**
   * Returns whether the lock of {@code resource} is held right now, on the "server".
   *
   * @param resource the resource
   * @return whether it is locked
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public boolean isLocked(String resource) {
    ResourceNames.validate(resource);
    return store.isLocked(resource);
  }

  /**
   * Returns how many acquisitions are waiting for {@code resource} to be released.
   *
   * @param resource the resource
   * @return the number of waiters
   */
  public int waiters(String resource) {
    return store.subscriptions(resource);
  }

  /**
   * Makes every later call to the "server" fail as if it were unreachable ({@code true}), or work
   * again ({@code false}). Held leases are then lost after their lease time minus the safety margin
   * ({@link LossReason#RENEWAL_TIMEOUT}); acquisitions throw {@link
   * dev.fencing.core.LeaseBackendException}.
   *
   * @param unreachable whether the server is unreachable
   */
  public void setUnreachable(boolean unreachable) {
    store.setDown(unreachable);
  }

  /**
   * Waits until the listeners and observer callbacks queued so far have run, at most {@code
   * timeout}.
   *
   * @param timeout the longest wait
   * @return whether they all ran
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitEvents(Duration timeout) throws InterruptedException {
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    try {
      events.execute(done::countDown);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      return events.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
    return done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Closes the manager as {@link LeaseManager#close()} says, then stops its threads; listeners
   * already queued still run.
   */
  @Override
  public void close() {
    synchronized (wake) {
      if (closed) {
        return;
      }
      closed = true;
      wake.notifyAll();
    }
    clock.removeOnAdvance(sweepNow);
    lifecycle.close();
    try {
      heartbeat.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    events.shutdown();
  }

  @Override
  public String toString() {
    return "InMemoryLeaseManager[held=" + lifecycle.heldCount() + "]";
  }

  private void wakeHeartbeat() {
    synchronized (wake) {
      wakeRequested = true;
      wake.notifyAll();
    }
  }

  /** The heartbeat: sweeps when a lease needs attention, when woken, and at least every second. */
  private void runHeartbeat() {
    while (!closed) {
      long waitNanos = MAX_SLEEP_NANOS;
      try {
        waitNanos = Math.min(lifecycle.sweep(), MAX_SLEEP_NANOS);
      } catch (RuntimeException e) {
        waitNanos = TimeUnit.MILLISECONDS.toNanos(1);
      }
      synchronized (wake) {
        try {
          if (!wakeRequested && !closed) {
            TimeUnit.NANOSECONDS.timedWait(wake, waitNanos);
          }
        } catch (InterruptedException e) {
          return;
        } finally {
          wakeRequested = false;
        }
      }
    }
  }

  /** Wakes the heartbeat on every acquisition, so it schedules the new lease's first renewal. */
  private final class WakingObserver implements LeaseObserver {
    private final LeaseObserver delegate;

    WakingObserver(LeaseObserver delegate) {
      this.delegate = delegate;
    }

    @Override
    public void onAcquired(Lease lease) {
      wakeHeartbeat();
      delegate.onAcquired(lease);
    }

    @Override
    public void onRenewed(Lease lease) {
      delegate.onRenewed(lease);
    }

    @Override
    public void onRenewalFailed(Lease lease, Throwable failure) {
      delegate.onRenewalFailed(lease, failure);
    }

    @Override
    public void onLost(Lease lease, LossReason reason) {
      delegate.onLost(lease, reason);
    }

    @Override
    public void onReleased(Lease lease, boolean deleted) {
      delegate.onReleased(lease, deleted);
    }

    @Override
    public void onReleaseFailed(Lease lease, Throwable failure) {
      delegate.onReleaseFailed(lease, failure);
    }
  }
}
