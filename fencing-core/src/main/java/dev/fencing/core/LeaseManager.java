package dev.fencing.core;

import java.time.Duration;
import java.util.Optional;

/**
 * Hands out leases on named resources, each with a fencing token strictly larger than every token
 * handed out before for the same resource.
 *
 * <p>Resource names are 1 to 200 characters from {@code A-Z a-z 0-9 - _ . : /}.
 */
public interface LeaseManager {

  /**
   * Acquires the lease on {@code resource}, waiting up to {@code maxWait} for the current holder to
   * release it or for its lease to expire.
   *
   * @param resource the resource name
   * @param maxWait how long to wait at most; zero means do not wait
   * @return the held lease
   * @throws IllegalArgumentException if the resource name is invalid or {@code maxWait} is negative
   * @throws LeaseUnavailableException if another holder kept the lease for the whole wait, or the
   *     wait was interrupted
   * @throws LeaseBackendException if Redis could not be reached or failed
   */
  Lease acquire(String resource, Duration maxWait);

  /**
   * Acquires the lease on {@code resource} if it is free right now.
   *
   * @param resource the resource name
   * @return the held lease, or empty if another holder has it
   * @throws IllegalArgumentException if the resource name is invalid
   * @throws LeaseBackendException if Redis could not be reached or failed
   */
  Optional<Lease> tryAcquire(String resource);

  /**
   * Makes sure the next token handed out for {@code resource} is larger than {@code floor}. Used to
   * recover when Redis lost its token counter (a restart without persistence, a fail-over to a
   * lagging replica) while a database still remembers higher tokens. Never lowers the counter.
   *
   * @param resource the resource name
   * @param floor the highest token known to have been used
   * @throws IllegalArgumentException if the resource name is invalid
   * @throws LeaseBackendException if Redis could not be reached or failed
   */
  void advanceTokenFloor(String resource, FencingToken floor);

  /** Returns the options every lease of this manager uses. */
  LeaseOptions options();
}
