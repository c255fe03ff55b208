package dev.fencing.shedlock;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.Fencing;
import dev.fencing.shedlock.internal.LockNames;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link LockProvider} whose locks are fenced leases. Give it a {@code
 * FencedLeaseManager}, and let the task write through the {@code FencedDataSource} of the same
 * database: once another instance holds the lock, the database rejects the task's writes.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(FencedLeaseManager leases) {
 *   return new FencedLockProvider(leases, FencedLockOptions.defaults());
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@code lockAtMostFor} is the lease time. By default the lease is not renewed, so the lock
 *       ends within {@code lockAtMostFor} as with other providers: a holder still running at nine
 *       tenths of it (the lease's safety margin) considers the lock lost and frees it, and its
 *       later writes are rejected; {@link FencedLockOptions#keepAlive()} renews it while the task
 *       runs instead (no {@code KeepAliveLockProvider} needed).
 *   <li>{@code lockAtLeastFor} is honoured at unlock: the lock stays on the server for what is left
 *       of it ({@link Lease#release(Duration)}).
 *   <li>The task runs in the fencing scope: {@link #lock} enters a {@link Fencing} scope with the
 *       lease on the calling thread and {@link SimpleLock#unlock()} ends it. ShedLock's {@code
 *       DefaultLockingTaskExecutor}, which its {@code @SchedulerLock} advice uses, locks, runs the
 *       task and unlocks on one thread, so the task's connections from a {@code FencedDataSource}
 *       are fenced with no change to the task. A connection must be taken inside the task: with
 *       Spring, {@code @Transactional} on the same method must be the inner advice.
 *   <li>Lock names map to resource names through {@link #resourceName(String)}: names made of
 *       {@code A-Z a-z 0-9 _ . / -} are kept as they are; other characters are escaped and
 *       over-long names hashed, never two names onto one resource.
 * </ul>
 *
 * <p>The lock is tried once, without waiting, as ShedLock expects. Locks cannot be extended ({@code
 * LockExtender}); use keep-alive instead.
 */
public final class FencedLockProvider implements LockProvider {

  private final LeaseManager leases;
  private final FencedLockOptions options;

  /**
   * Creates the provider.
   *
   * @param leases hands out the leases; a {@code FencedLeaseManager} for the task's writes to be
   *     fenced (with another manager, leases are not registered and fenced writes are rejected)
   * @param options the resource prefix and keep-alive mode
   * @throws NullPointerException if an argument is null
   */
  public FencedLockProvider(LeaseManager leases, FencedLockOptions options) {
    this.leases = Objects.requireNonNull(leases, "leases");
    this.options = Objects.requireNonNull(options, "options");
  }

  /**
   * Returns the fencing resource of a lock name.
   *
   * @param lockName the ShedLock lock name
   * @return the resource name
   * @throws IllegalArgumentException if {@code lockName} is null or empty
   */
  public String resourceName(String lockName) {
    return LockNames.toResource(options.resourcePrefix(), lockName);
  }

  /**
   * Tries to take the lock once, without waiting. On success the calling thread is in the fencing
   * scope of the new lease until {@link SimpleLock#unlock()} is called on it.
   *
   * @param configuration the lock name, {@code lockAtMostFor} (the lease time, at least 10 ms) and
   *     {@code lockAtLeastFor}
   * @return the lock, or empty if another holder has it
   * @throws IllegalArgumentException if {@code lockAtMostFor} is shorter than 10 ms or longer than
   *     365 days
   * @throws dev.fencing.core.LeaseBackendException if Redis could not be reached
   * @throws dev.fencing.jdbc.FenceRegistrationException if the lease could not be registered in the
   *     fence (it was released)
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    Objects.requireNonNull(configuration, "configuration");
    Duration lockAtMostFor = configuration.getLockAtMostFor();
    if (lockAtMostFor.compareTo(LeaseRequest.MIN_LEASE_TIME) < 0) {
      throw new IllegalArgumentException(
          "lockAtMostFor of lock \""
              + configuration.getName()
              + "\" must be at least 10ms (it is the lease time), got "
              + lockAtMostFor);
    }
    LeaseRequest request = LeaseRequest.forLeaseTime(lockAtMostFor);
    if (!options.keepAlive()) {
      request = request.withoutRenewal();
    }
    return leases
        .tryAcquire(resourceName(configuration.getName()), request)
        .map(lease -> new FencedLock(lease, configuration));
  }

  @Override
  public String toString() {
    return "FencedLockProvider" + options;
  }

  /** A held ShedLock lock: the lease and the fencing scope entered on the locking thread. */
  private static final class FencedLock implements SimpleLock {
    private final Lease lease;
    private final LockConfiguration configuration;
    private final Fencing.Scope scope;

    FencedLock(Lease lease, LockConfiguration configuration) {
      this.lease = lease;
      this.configuration = configuration;
      Fencing.Scope entered;
      try {
        entered = Fencing.enter(lease);
      } catch (RuntimeException e) {
        lease.close();
        throw e;
      }
      this.scope = entered;
    }

    /**
     * Ends the fencing scope and releases the lease, keeping the lock until {@code lockAtLeastFor}
     * has passed.
     *
     * @throws IllegalStateException if called on another thread than the one that locked (the lease
     *     is released all the same; that thread's scope stays open and its fenced connections fail
     *     fast)
     */
    @Override
    public void unlock() {
      try {
        scope.close();
      } finally {
        Duration keep =
            clamp(Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil()));
        if (keep.isZero()) {
          lease.close();
        } else {
          lease.release(keep);
        }
      }
    }

    private Duration clamp(Duration keep) {
      if (keep.isNegative()) {
        return Duration.ZERO;
      }
      return keep.compareTo(lease.leaseTime()) > 0 ? lease.leaseTime() : keep;
    }

    @Override
    public String toString() {
      return "FencedLock[" + configuration.getName() + ", " + lease + "]";
    }
  }
}
