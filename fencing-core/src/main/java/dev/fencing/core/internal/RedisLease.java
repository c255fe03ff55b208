package dev.fencing.core.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLossListener;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A lease held in Redis, renewing itself on the store's heartbeat thread. */
final class RedisLease implements Lease {

  private static final Logger log = LoggerFactory.getLogger(RedisLease.class);

  private enum State {
    HELD,
    LOST,
    RELEASED
  }

  private final RedisLeaseStore store;
  private final RedisLeaseStore.Keys keys;
  private final String resource;
  private final FencingToken token;
  private final String leaseId;
  private final String value;
  private final long validityNanos;
  private final AtomicBoolean renewalInFlight = new AtomicBoolean();
  private final List<LeaseLossListener> listeners = new ArrayList<>(1);

  private final long renewIntervalNanos;

  private volatile State state = State.HELD;
  private volatile long deadlineNanos;
  private volatile LossReason lossReason;
  private long lastRenewalSentNanos;

  RedisLease(
      RedisLeaseStore store,
      RedisLeaseStore.Keys keys,
      String resource,
      FencingToken token,
      String leaseId,
      long sentAtNanos) {
    this.store = store;
    this.keys = keys;
    this.resource = resource;
    this.token = token;
    this.leaseId = leaseId;
    this.value = leaseId + ":" + token.value();
    this.validityNanos = store.leaseNanos() - store.options().safetyMargin().toNanos();
    this.deadlineNanos = sentAtNanos + validityNanos;
    this.renewIntervalNanos = store.options().renewInterval().toNanos();
    this.lastRenewalSentNanos = sentAtNanos;
  }

  RedisLeaseStore.Keys keys() {
    return keys;
  }

  String value() {
    return value;
  }

  @Override
  public String resource() {
    return resource;
  }

  @Override
  public FencingToken token() {
    return token;
  }

  @Override
  public String leaseId() {
    return leaseId;
  }

  @Override
  public Duration leaseTime() {
    return store.options().leaseTime();
  }

  @Override
  public boolean isHeld() {
    return state == State.HELD && System.nanoTime() - deadlineNanos < 0;
  }

  @Override
  public void checkHeld() {
    if (isHeld()) {
      return;
    }
    State current = state;
    String why =
        switch (current) {
          case RELEASED -> "it was released";
          case LOST -> "it was lost (" + lossReason + ")";
          case HELD -> "no renewal succeeded within the lease time minus the safety margin";
        };
    throw new LeaseLostException(resource, token, why);
  }

  @Override
  public Optional<LossReason> lossReason() {
    return Optional.ofNullable(lossReason);
  }

  @Override
  public void onLoss(LeaseLossListener listener) {
    Objects.requireNonNull(listener, "listener");
    LossReason reason;
    synchronized (this) {
      reason = lossReason;
      if (reason == null) {
        listeners.add(listener);
        return;
      }
    }
    listener.onLost(this, reason);
  }

  @Override
  public void close() {
    synchronized (this) {
      if (state != State.HELD) {
        return;
      }
      state = State.RELEASED;
    }
    store.forget(this);
    try {
      boolean deleted = store.release(this);
      store.notifyObserver(() -> store.observer().onReleased(this, deleted));
    } catch (RuntimeException e) {
      log.warn(
          "could not release the lease on \"{}\" (token {}); it expires after {}",
          resource,
          token,
          leaseTime(),
          e);
      store.notifyObserver(() -> store.observer().onReleaseFailed(this, e));
    }
  }

  /**
   * Called on the heartbeat thread at every sweep: reports the lease lost when its deadline has
   * passed, and returns whether a renewal is due (marking it in flight).
   */
  boolean dueForRenewal(long now) {
    if (state != State.HELD) {
      store.forget(this);
      return false;
    }
    if (now - deadlineNanos >= 0) {
      markLost(LossReason.RENEWAL_TIMEOUT);
      return false;
    }
    if (now - lastRenewalSentNanos < renewIntervalNanos
        || !renewalInFlight.compareAndSet(false, true)) {
      return false;
    }
    lastRenewalSentNanos = now;
    return true;
  }

  void onRenewal(long sentAt, Long renewed, Throwable failure) {
    renewalInFlight.set(false);
    if (state != State.HELD) {
      return;
    }
    if (failure != null) {
      store.notifyObserver(() -> store.observer().onRenewalFailed(this, failure));
      return;
    }
    if (renewed == 1L) {
      long newDeadline = sentAt + validityNanos;
      if (newDeadline - deadlineNanos > 0) {
        deadlineNanos = newDeadline;
      }
      store.notifyObserver(() -> store.observer().onRenewed(this));
    } else {
      markLost(LossReason.TAKEN_OVER);
    }
  }

  private void markLost(LossReason reason) {
    List<LeaseLossListener> toNotify;
    synchronized (this) {
      if (state != State.HELD) {
        return;
      }
      state = State.LOST;
      lossReason = reason;
      toNotify = List.copyOf(listeners);
      listeners.clear();
    }
    store.forget(this);
    log.warn("lease on \"{}\" with token {} lost: {}", resource, token, reason);
    if (reason == LossReason.RENEWAL_TIMEOUT) {
      // Our value is unique, so this compare-and-delete can only remove our own stale lock.
      store.releaseAsync(this);
    }
    store.notifyObserver(() -> store.observer().onLost(this, reason));
    for (LeaseLossListener listener : toNotify) {
      try {
        listener.onLost(this, reason);
      } catch (RuntimeException e) {
        log.warn("lease loss listener failed", e);
      }
    }
  }

  @Override
  public String toString() {
    return "Lease[resource=" + resource + ", token=" + token + ", state=" + state + "]";
  }
}
