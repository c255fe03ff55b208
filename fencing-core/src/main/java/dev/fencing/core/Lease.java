package dev.fencing.core;

import java.time.Duration;
import java.util.Optional;

/**
 * A held lease on a named resource, with the fencing token of this acquisition.
 *
 * <p>While held, a renewing lease renews itself on its manager's heartbeat. It is not bound to the
 * thread that acquired it: it may be handed to and closed from any thread. {@link #close()}
 * releases it only if the lock still holds this lease's value, so a holder can never delete a
 * successor's lock.
 *
 * <p>A lease is never lost silently: whenever it stops being held other than by its holder's
 * release (taken over, renewals failing, a non-renewing lease expiring, its manager closed, or
 * {@link #markLost(LossReason)}), {@link #isHeld()} turns false and every loss listener is called
 * exactly once.
 *
 * <p>{@link #isHeld()} is the holder's own conservative view. Safety never depends on it: a
 * database guarded with fencing-jdbc rejects a stale holder's writes whatever this view says.
 */
public interface Lease extends AutoCloseable {

  /** {@return the resource this lease is on} */
  String resource();

  /** {@return the fencing token of this acquisition, strictly larger than any earlier one} */
  FencingToken token();

  /** {@return the random, unguessable id of this acquisition} */
  String leaseId();

  /** {@return the lease time: how long the lock lives on the server after each renewal} */
  Duration leaseTime();

  /**
   * {@return whether this holder still considers itself the owner: not released, not lost, and a
   * renewal (or the acquisition) succeeded recently enough by the local monotonic clock}
   */
  boolean isHeld();

  /**
   * Throws if the lease is not held.
   *
   * @throws LeaseLostException if the lease was lost or released
   */
  void checkHeld();

  /** {@return why the lease was lost, or empty while it is held or after a normal release} */
  Optional<LossReason> lossReason();

  /**
   * Registers a listener called exactly once if the lease is lost, on the manager's event thread
   * (never the heartbeat thread). If it is already lost, the listener is called at once on the
   * calling thread. Not called after a normal release. A listener that throws is logged and does
   * not affect other listeners or the heartbeat.
   *
   * @param listener the listener
   * @throws NullPointerException if {@code listener} is null
   */
  void onLoss(LeaseLossListener listener);

  /**
   * Reports from outside that this lease is no longer valid, for example because the database fence
   * names a newer holder ({@link LossReason#SUPERSEDED}). At once {@link #isHeld()} returns false
   * and renewals stop; the loss listeners are called exactly once, on the manager's event thread;
   * the lock is deleted on the server if it still holds this lease's value. Idempotent: calling it
   * on a lease already lost or released does nothing (the first reason stays). Wrappers of a lease
   * must forward this call.
   *
   * @param reason why the lease is lost
   * @throws NullPointerException if {@code reason} is null
   */
  void markLost(LossReason reason);

  /**
   * Releases the lease but leaves its lock on the server for {@code keepLockedFor}, after which it
   * expires: no one else acquires the resource until then (ShedLock's {@code lockAtLeastFor}).
   * Renewals stop at once and {@link #isHeld()} returns false. Zero releases at once, as {@link
   * #close()} does. Does nothing if the lease is already lost or released.
   *
   * @param keepLockedFor how long the lock stays after this call; zero or positive, at most the
   *     lease time
   * @throws NullPointerException if {@code keepLockedFor} is null
   * @throws IllegalArgumentException if {@code keepLockedFor} is negative or longer than the lease
   *     time
   */
  void release(Duration keepLockedFor);

  /**
   * Releases the lease: stops the heartbeat and deletes the lock only if it still holds this
   * lease's value, waking any waiters. Closing a lease that is already lost or closed does nothing.
   * If Redis cannot be reached, the failure is logged and reported to the observer, and the lock
   * expires on its own after the lease time.
   */
  @Override
  void close();
}
