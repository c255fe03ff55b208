package dev.fencing.core;

import dev.fencing.core.internal.LeaseLifecycle;
import dev.fencing.core.internal.RedisLeaseStore;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.RedissonClient;

/**
 * A {@link LeaseManager} on Redis, through a {@link RedissonClient} you configure and own.
 *
 * <p>Each acquisition is one atomic Lua script that checks the lock key, increments the resource's
 * token counter and sets the lock with a random per-acquisition value and a TTL. Keys of one
 * resource share a hash slot, so the same scripts run on Redis Cluster. Held leases renew
 * themselves on one shared heartbeat thread per manager; loss listeners run on a separate event
 * thread.
 *
 * <pre>{@code
 * try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
 *     Lease lease = leases.acquire("billing-nightly",
 *         LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(5)))) {
 *   runJob(lease.token());
 * }
 * }</pre>
 *
 * <p>{@link #close()} reports every held lease lost and stops the manager's threads, but does not
 * shut down the Redisson client.
 */
public final class RedisLeaseManager implements LeaseManager {

  private final LeaseLifecycle lifecycle;

  private RedisLeaseManager(LeaseLifecycle lifecycle) {
    this.lifecycle = lifecycle;
  }

  /**
   * Creates a manager with no observer.
   *
   * @param redisson the Redisson client
   * @param options the lease options
   * @return the manager
   * @throws NullPointerException if an argument is null
   */
  public static RedisLeaseManager create(RedissonClient redisson, LeaseOptions options) {
    return create(redisson, options, LeaseObserver.NONE);
  }

  /**
   * Creates a manager that reports every lease state change to {@code observer}.
   *
   * @param redisson the Redisson client
   * @param options the lease options
   * @param observer the observer of acquisitions, renewals, losses and releases
   * @return the manager
   * @throws NullPointerException if an argument is null
   */
  public static RedisLeaseManager create(
      RedissonClient redisson, LeaseOptions options, LeaseObserver observer) {
    Objects.requireNonNull(redisson, "redisson");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(observer, "observer");
    return new RedisLeaseManager(
        LeaseLifecycle.start(
            new RedisLeaseStore(redisson, options.keyPrefix()), options, observer));
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

  /**
   * {@inheritDoc}
   *
   * <p>Does not shut down the Redisson client.
   */
  @Override
  public void close() {
    lifecycle.close();
  }
}
