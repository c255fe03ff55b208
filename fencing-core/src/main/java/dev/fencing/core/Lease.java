package dev.fencing.core;

import java.time.Duration;
import java.util.Optional;

/**
 * A held lease on a named resource, with the fencing token of this acquisition.
 *
 * <p>While held, the lease renews itself on a heartbeat. It is not bound to the thread that
 * acquired it: it may be handed to and closed from any thread. {@link #close()} releases it only if
 * the lock still holds this lease's value, so a holder can never delete a successor's lock.
 *
 * <p>{@link #isHeld()} is the holder's own conservative view. Safety never depends on it: a
 * database guarded with fencing-jdbc rejects a stale holder's writes whatever this view says.
 */
public interface Lease extends AutoCloseable {

  /** Returns the resource this lease is on. */
  String resource();

  /** Returns the fencing token of this acquisition, strictly larger than any earlier one. */
  FencingToken token();

  /** Returns the random, unguessable id of this acquisition. */
  String leaseId();

  /** Returns the lease time: how long the lock lives on the server after each renewal. */
  Duration leaseTime();

  /**
   * Returns whether this holder still considers itself the owner: not released, not lost, and a
   * renewal succeeded recently enough by the local monotonic clock.
   */
  boolean isHeld();

  /**
   * Throws if the lease is not held.
   *
   * @throws LeaseLostException if the lease was lost or released
   */
  void checkHeld();

  /** Returns why the lease was lost, or empty while it is held or after a normal release. */
  Optional<LossReason> lossReason();

  /**
   * Registers a listener called exactly once if the lease is lost. If it is already lost, the
   * listener is called at once on the calling thread. Not called after a normal release.
   *
   * @param listener the listener
   * @throws NullPointerException if {@code listener} is null
   */
  void onLoss(LeaseLossListener listener);

  /**
   * Releases the lease: stops the heartbeat and deletes the lock only if it still holds this
   * lease's value, waking any waiters. Closing a lease that is already lost or closed does nothing.
   * If Redis cannot be reached, the failure is logged and reported to the observer, and the lock
   * expires on its own after the lease time.
   */
  @Override
  void close();
}
