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
   * Cleans up after an acquisition whose answer the caller did not wait for: deletes the lock if it
   * was taken with {@code leaseId}, and makes sure that acquisition, if it has not run yet, will
   * not take the lock for the next {@code leaseMillis}. Returns whether a lock was deleted.
   */
  CompletableFuture<Boolean> abandon(String resource, String leaseId, long leaseMillis);

  /**
   * Extends each lock that still holds its value by its lease time. Returns one future per renewal,
   * in order, telling whether that lock was extended; each completes as soon as its own answer is
   * in.
   */
  List<CompletableFuture<Boolean>> renew(List<Renewal> renewals);

  /**
   * If the lock still holds {@code value}: deletes it and wakes waiters when {@code keepMillis} is
   * zero, or lets it expire in {@code keepMillis}; returns whether the lock held the value.
   */
  CompletableFuture<Boolean> release(String resource, String value, long keepMillis);

  /** Raises the token counter of {@code resource} to at least {@code floor}; never lowers it. */
  CompletableFuture<Void> advanceFloor(String resource, long floor);

  /**
   * Calls {@code onRelease} whenever a lock of {@code resource} is deleted by a release, until the
   * returned subscription is cancelled.
   */
  CompletableFuture<Subscription> subscribeReleases(String resource, Runnable onRelease);

  /** Names the server(s) for error messages, for example {@code "Redis at redis://host:6379"}. */
  String describe();

  /** One lock to renew. */
  record Renewal(String resource, String value, long leaseMillis) {}

  /** A subscription to releases. */
  interface Subscription {
    /** Stops the notifications; safe to call more than once. */
    void cancel();
  }
}
