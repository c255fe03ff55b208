package dev.fencing.jdbc;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import dev.fencing.jdbc.internal.FenceClassifier;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseManager} that registers every lease in the database's {@link ResourceFence} right
 * after acquiring it, so the database starts rejecting the previous holder's writes before the new
 * holder writes anything.
 *
 * <p>If Redis hands out a token the fence has already seen (Redis restarted without persistence, or
 * failed over to a replica that missed increments), registration fails while the lease is still
 * held; this manager then advances the Redis token counter past the fence's high-water mark,
 * releases the lease and acquires again, so tokens keep increasing from the database's point of
 * view. A lease is returned only once registered; a lease that could not be registered is always
 * released before the exception is thrown.
 *
 * <p>While a lease it registered is held, the manager reads the fence every third of the lease
 * time. If the fence no longer knows the lease (a fail-over to a standby that missed the
 * registration), it registers the lease again: that needs a token strictly above the fence's,
 * exactly like a first registration, so it never lets an older holder back in. If the fence names a
 * newer registration, or this very registration made before the server's last promotion (an older
 * fence epoch, which could hide a newer registration the fail-over lost), the lease is marked lost
 * ({@link LossReason#SUPERSEDED}): its holder must acquire again, for a new token. A holder the
 * fence does not know is never left holding the lock silently.
 *
 * <p>The leases returned are the delegate's own, so {@link Lease#markLost(LossReason)} reaches them
 * directly. {@link #close()} closes the delegate: the delegate is typically created only to be
 * passed here, so this manager owns it. It does not close the fence's data source, which the
 * application owns.
 */
public final class FencedLeaseManager implements LeaseManager {

  private static final Logger log = LoggerFactory.getLogger(FencedLeaseManager.class);
  private static final int MAX_RECOVERIES = 3;

  private static final long MIN_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private final LeaseManager delegate;
  private final ResourceFence fence;
  private final FenceObserver observer;
  private final ScheduledExecutorService checks = checker();

  /**
   * Creates the manager. It takes ownership of {@code delegate}: closing this manager closes it.
   *
   * @param delegate the manager that hands out the leases, typically a {@code RedisLeaseManager}
   * @param fence the fence to register in, typically {@link FencedDataSource#fence()}
   * @throws NullPointerException if an argument is null
   */
  public FencedLeaseManager(LeaseManager delegate, ResourceFence fence) {
    this(delegate, fence, FenceObserver.NONE);
  }

  /**
   * Creates a manager that reports registrations and counter recoveries to {@code observer}. It
   * takes ownership of {@code delegate}: closing this manager closes it.
   *
   * @param delegate the manager that hands out the leases, typically a {@code RedisLeaseManager}
   * @param fence the fence to register in, typically {@link FencedDataSource#fence()}
   * @param observer the observer of registrations and recoveries
   * @throws NullPointerException if an argument is null
   */
  public FencedLeaseManager(LeaseManager delegate, ResourceFence fence, FenceObserver observer) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.fence = Objects.requireNonNull(fence, "fence");
    this.observer = Objects.requireNonNull(observer, "observer");
  }

  /**
   * {@inheritDoc}
   *
   * <p>The lease is registered in the fence before it is returned; recovering from a lost Redis
   * counter acquires again within what is left of the wait.
   *
   * @throws FenceRegistrationException if registration failed; the lease was released
   * @throws dev.fencing.core.LeaseLostException if the lease was lost while registering; it was
   *     released
   */
  @Override
  public Lease acquire(String resource, LeaseRequest request) {
    Objects.requireNonNull(request, "request");
    long deadline = System.nanoTime() + request.maxWait().toNanos();
    Lease lease = delegate.acquire(resource, request);
    for (int recoveries = 0; ; recoveries++) {
      if (registerOrRecover(lease, recoveries).isEmpty()) {
        return lease;
      }
      lease = delegate.acquire(resource, request.withMaxWait(remaining(deadline)));
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The lease is registered in the fence before it is returned.
   *
   * @throws FenceRegistrationException if registration failed; the lease was released
   * @throws dev.fencing.core.LeaseLostException if the lease was lost while registering; it was
   *     released
   */
  @Override
  public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
    Objects.requireNonNull(request, "request");
    long deadline = System.nanoTime() + request.maxWait().toNanos();
    Optional<Lease> acquired = delegate.tryAcquire(resource, request);
    for (int recoveries = 0; acquired.isPresent(); recoveries++) {
      if (registerOrRecover(acquired.get(), recoveries).isEmpty()) {
        return acquired;
      }
      acquired = delegate.tryAcquire(resource, request.withMaxWait(remaining(deadline)));
    }
    return acquired;
  }

  @Override
  public void advanceTokenFloor(String resource, FencingToken floor) {
    delegate.advanceTokenFloor(resource, floor);
  }

  @Override
  public LeaseOptions options() {
    return delegate.options();
  }

  /** Closes the delegate manager (see the class comment); the fence's data source stays open. */
  @Override
  public void close() {
    checks.shutdownNow();
    delegate.close();
  }

  /** Reads the fence for {@code lease} every third of its lease time while it is held. */
  private void watch(Lease lease) {
    long period = Math.max(MIN_CHECK_NANOS, lease.leaseTime().toNanos() / 3);
    AtomicReference<ScheduledFuture<?>> self = new AtomicReference<>();
    try {
      self.set(
          checks.scheduleWithFixedDelay(
              () -> {
                if (!lease.isHeld() || !stillKnown(lease)) {
                  ScheduledFuture<?> task = self.get();
                  if (task != null) {
                    task.cancel(false);
                  }
                }
              },
              period,
              period,
              TimeUnit.NANOSECONDS));
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // the manager is closing: its leases are reported lost by the delegate
    }
  }

  /**
   * One check of the fence for a held lease: registers it again if the fence lost it, marks it lost
   * if the fence names another registration. Returns whether to keep watching.
   */
  private boolean stillKnown(Lease lease) {
    FenceClassifier.Verdict verdict;
    try {
      verdict = fence.check(lease);
    } catch (SQLException | RuntimeException e) {
      return true; // the database is unreachable (a fail-over in progress): ask again later
    }
    switch (verdict) {
      case NO_SUCH_ROW:
        return true;
      case NOT_REGISTERED:
        try {
          fence.register(lease);
          log.warn(
              "the fence no longer knew token {} for \"{}\" (a fail-over lost its registration):"
                  + " registered it again",
              lease.token(),
              lease.resource());
          notify(() -> observer.onRegistered(lease));
          return true;
        } catch (SQLException | RuntimeException e) {
          return superseded(lease, "registering it again failed: " + e.getMessage());
        }
      default:
        return superseded(
            lease,
            "the fence names a newer registration, or this one made before the database's last"
                + " promotion");
    }
  }

  private static boolean superseded(Lease lease, String why) {
    if (lease.isHeld()) {
      log.warn(
          "lease with token {} for \"{}\" is lost: {}; acquire it again",
          lease.token(),
          lease.resource(),
          why);
      lease.markLost(LossReason.SUPERSEDED);
    }
    return false;
  }

  private static ScheduledExecutorService checker() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "fencing-fence-check");
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  private static Duration remaining(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }

  /** Registers; returns empty when done, or a marker when the caller must acquire again. */
  private Optional<Lease> registerOrRecover(Lease lease, int recoveries) {
    try {
      fence.register(lease);
      notify(() -> observer.onRegistered(lease));
      watch(lease);
      return Optional.empty();
    } catch (StaleTokenException stale) {
      notify(() -> observer.onRegistrationFailed(lease, stale));
      if (recoveries >= MAX_RECOVERIES || !lease.isHeld()) {
        lease.close();
        throw new FenceRegistrationException(
            "could not register a token above the fence for \""
                + lease.resource()
                + "\" after "
                + recoveries
                + " recoveries: "
                + stale.getMessage(),
            stale);
      }
      long floor = Math.max(stale.currentToken(), lease.token().value());
      log.warn(
          "Redis handed out token {} for \"{}\" but the fence is at {}: Redis lost its counter;"
              + " advancing it past {} and acquiring again",
          lease.token(),
          lease.resource(),
          stale.currentToken(),
          floor);
      try {
        delegate.advanceTokenFloor(lease.resource(), FencingToken.of(floor));
        notify(() -> observer.onCounterRecovered(lease, stale.currentToken()));
      } finally {
        lease.close(); // also when advancing failed: never leave a lease renewed with no holder
      }
      return Optional.of(lease);
    } catch (SQLException e) {
      notify(() -> observer.onRegistrationFailed(lease, e));
      lease.close();
      throw new FenceRegistrationException(
          "registering token "
              + lease.token()
              + " for \""
              + lease.resource()
              + "\" failed: "
              + e.getMessage(),
          e);
    } catch (RuntimeException e) {
      notify(() -> observer.onRegistrationFailed(lease, e));
      lease.close();
      throw e;
    }
  }

  private static void notify(Runnable callback) {
    try {
      callback.run();
    } catch (RuntimeException e) {
      log.warn("fence observer failed", e);
    }
  }
}
