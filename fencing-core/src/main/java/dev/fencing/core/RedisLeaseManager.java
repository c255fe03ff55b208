package dev.fencing.core;

import dev.fencing.core.internal.RedisLeaseStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.redisson.api.RedissonClient;

/**
 * A {@link LeaseManager} on Redis, through a {@link RedissonClient} you configure and own.
 *
 * <p>Each acquisition is one atomic Lua script that checks the lock key, increments the resource's
 * token counter and sets the lock with a random per-acquisition value and a TTL. Keys of one
 * resource share a hash slot, so the same scripts run on Redis Cluster. Held leases renew
 * themselves on one shared heartbeat thread per manager.
 *
 * <pre>{@code
 * try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
 *     Lease lease = leases.acquire("billing-nightly", Duration.ofSeconds(5))) {
 *   runJob(lease.token());
 * }
 * }</pre>
 *
 * <p>{@link #close()} stops the heartbeat thread (held leases then expire on the server) but does
 * not shut down the Redisson client.
 */
public final class RedisLeaseManager implements LeaseManager, AutoCloseable {

  private final RedisLeaseStore store;

  private RedisLeaseManager(RedisLeaseStore store) {
    this.store = store;
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
    return new RedisLeaseManager(new RedisLeaseStore(redisson, options, observer));
  }

  @Override
  public Lease acquire(String resource, Duration maxWait) {
    return store.acquire(resource, maxWait);
  }

  @Override
  public Optional<Lease> tryAcquire(String resource) {
    return store.tryAcquire(resource);
  }

  @Override
  public void advanceTokenFloor(String resource, FencingToken floor) {
    store.advanceTokenFloor(resource, floor);
  }

  @Override
  public LeaseOptions options() {
    return store.options();
  }

  /** Stops the heartbeat thread. Held leases stop renewing and expire on the server. */
  @Override
  public void close() {
    store.close();
  }
}
