package dev.fencing.core;

import java.util.Optional;

/**
 * Hands out leases on named resources, each with a fencing token strictly larger than every token
 * handed out before for the same resource.
 *
 * <p>Resource names are 1 to 200 characters from {@code A-Z a-z 0-9 - _ . : /}. Every acquisition
 * names its lease time and its longest wait in a {@link LeaseRequest}:
 *
 * <pre>{@code
 * try (Lease lease = leases.acquire("billing-nightly",
 *     LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10)))) {
 *   runJob(lease.token());
 * }
 * }</pre>
 *
 * <p>{@link #close()} ends the manager: every lease it still holds is reported lost with {@link
 * LossReason#MANAGER_CLOSED} and left to expire on the server; later calls throw {@link
 * LeaseManagerClosedException}.
 */
public interface LeaseManager extends AutoCloseable {

  /**
   * Acquires the lease on {@code resource}, waiting up to {@link LeaseRequest#maxWait()} for the
   * current holder to release it or for its lease to expire. Waiters queue: a release hands the
   * lease to the one that has waited longest, with a new token.
   *
   * @param resource the resource name
   * @param request the lease time, the longest wait and whether the lease renews itself
   * @return the held lease
   * @throws IllegalArgumentException if the resource name is invalid
   * @throws NullPointerException if {@code request} is null
   * @throws LeaseUnavailableException if another holder kept the lease for the whole wait, or the
   *     wait was interrupted (the interrupt status is kept)
   * @throws LeaseBackendException if the store (Redis) could not be reached or failed
   * @throws LeaseManagerClosedException if this manager is closed
   */
  Lease acquire(String resource, LeaseRequest request);

  /**
   * Like {@link #acquire(String, LeaseRequest)}, but returns empty instead of throwing when another
   * holder kept the lease for the whole wait. With the default wait of zero, this acquires only if
   * the lease is free right now.
   *
   * @param resource the resource name
   * @param request the lease time, the longest wait and whether the lease renews itself
   * @return the held lease, or empty if another holder has it
   * @throws IllegalArgumentException if the resource name is invalid
   * @throws NullPointerException if {@code request} is null
   * @throws LeaseUnavailableException if the wait was interrupted (the interrupt status is kept)
   * @throws LeaseBackendException if the store (Redis) could not be reached or failed
   * @throws LeaseManagerClosedException if this manager is closed
   */
  Optional<Lease> tryAcquire(String resource, LeaseRequest request);

  /**
   * Makes sure the next token handed out for {@code resource} is larger than {@code floor}. Used to
   * recover when Redis lost its token counter (a restart without persistence, a fail-over to a
   * lagging replica) while a database still remembers higher tokens. Never lowers the counter.
   *
   * @param resource the resource name
   * @param floor the highest token known to have been used
   * @throws IllegalArgumentException if the resource name is invalid
   * @throws NullPointerException if {@code floor} is null
   * @throws LeaseBackendException if the store (Redis) could not be reached or failed, or the call
   *     was interrupted
   * @throws LeaseManagerClosedException if this manager is closed
   */
  void advanceTokenFloor(String resource, FencingToken floor);

  /** {@return the options of this manager} */
  LeaseOptions options();

  /**
   * Closes the manager: stops its heartbeat, reports every lease it still holds lost with {@link
   * LossReason#MANAGER_CLOSED} (listeners are called once each) and leaves their locks to expire on
   * the server after at most their lease time. Later acquisitions throw {@link
   * LeaseManagerClosedException}. Closing twice does nothing. Release your leases first for a clean
   * shutdown.
   */
  @Override
  void close();
}
