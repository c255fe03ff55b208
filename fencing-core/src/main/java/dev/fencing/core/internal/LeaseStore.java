package dev.fencing.core.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where leases live: the atomic operations a {@link LeaseLifecycle} builds leases from. Every
 * operation is asynchronous; the lifecycle bounds how long it waits for each.
 *
 * <p>A lock holds the value {@code leaseId + ":" + token}. A store never decides anything about
 * time on the holder's side: that is the lifecycle's job.
 */
public interface LeaseStore {

  /**
   * If the lock of {@code resource} is free: increments its token counter, sets the lock to {@code
   * leaseId:token} for {@code leaseMillis}, and returns the token (positive). Otherwise returns
   * {@code -(remaining lock time in ms) - 1}.
   */
  CompletableFuture<Long> acquire(String resource, String leaseId, long leaseMillis);

  /**
   * As {@link #acquire}, for a caller that waits: if the lock already holds {@code leaseId} (it was
   * handed over while the answer was on its way), extends it by {@code leaseMillis} and returns its
   * token; if the lock is free, takes it; otherwise puts {@code leaseId} in the resource's queue of
   * waiters (keeping its place when called again), where it stays at most {@code queueMillis} after
   * the lock's remaining time, and returns {@code -(remaining lock time in ms) - 1}. A release
   * hands the lock to the first live waiter in the queue. Returns {@code -1} if {@code leaseId} was
   * abandoned.
   */
  CompletableFuture<Long> acquireOrQueue(
      String resource, String leaseId, long leaseMillis, long queueMillis);

  /**
   * Cleans up after an acquisition whose answer the caller did not wait for, or a waiter that gave
   * up: takes {@code leaseId} out of the queue, deletes the lock if it was taken with (or handed
   * to) {@code leaseId} and then hands it to the next waiter, and makes sure that acquisition, if
   * it has not run yet, will not take the lock for the next {@code leaseMillis}.
   */
  CompletableFuture<Released> abandon(String resource, String leaseId, long leaseMillis);

  /**
   * Extends each lock that still holds its value by its lease time. Returns one future per renewal,
   * in order, telling whether that lock was extended; each completes as soon as its own answer is
   * in.
   */
  List<CompletableFuture<Boolean>> renew(List<Renewal> renewals);

  /**
   * If the lock still holds {@code value}: with {@code keepMillis} zero, deletes it and hands it to
   * the first live waiter in the queue (a fresh token, set in the same atomic step) or, with nobody
   * queued, leaves it free; either way announces the release. With {@code keepMillis} above zero,
   * lets the lock expire in that time instead.
   */
  CompletableFuture<Released> release(String resource, String value, long keepMillis);

  /** Raises the token counter of {@code resource} to at least {@code floor}; never lowers it. */
  CompletableFuture<Void> advanceFloor(String resource, long floor);

  /**
   * Calls {@code listener} whenever a lock of {@code resource} is released or handed over, until
   * the returned subscription is cancelled.
   */
  CompletableFuture<Subscription> subscribeReleases(String resource, ReleaseListener listener);

  /** Names the server(s) for error messages, for example {@code "Redis at redis://host:6379"}. */
  String describe();

  /**
   * What a release or an abandonment did: whether the lock held the caller's value, and to whom it
   * was handed ({@code handedTo} null when nobody was waiting or nothing was released).
   *
   * @param held whether the lock held the caller's value
   * @param handedTo the lease id the lock was handed to, or null
   * @param handedToken the token it was handed over with, or 0
   */
  record Released(boolean held, String handedTo, long handedToken) {
    /** The lock did not hold the value: nothing happened. */
    static final Released NOT_HELD = new Released(false, null, 0);

    /** Released (or kept to expire), and handed to nobody. */
    static final Released FREED = new Released(true, null, 0);
  }

  /** Hears releases of one resource. */
  @FunctionalInterface
  interface ReleaseListener {
    /**
     * A lock was released: handed to {@code handedTo} with {@code token}, or left free ({@code
     * handedTo} null, {@code token} 0).
     */
    void onRelease(String handedTo, long token);
  }

  /** One lock to renew. */
  record Renewal(String resource, String value, long leaseMillis) {}

  /** A subscription to releases. */
  interface Subscription {
    /** Stops the notifications; safe to call more than once. */
    void cancel();
  }
}
