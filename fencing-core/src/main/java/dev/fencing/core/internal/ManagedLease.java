package dev.fencing.core.internal;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLossListener;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A lease kept by a {@link LeaseLifecycle}: its deadline, its renewals and its listeners. */
final class ManagedLease implements Lease {

  private static final Logger log = LoggerFactory.getLogger(ManagedLease.class);
  private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private enum State {
    HELD,
    LOST,
    RELEASED
  }

  private final LeaseLifecycle lifecycle;
  private final String resource;
  private final FencingToken token;
  private final String leaseId;
  private final String value;
  private final Duration leaseTime;
  private final boolean renewing;
  private final long validityNanos;
  private final long renewIntervalNanos;
  private final long retryNanos;
  private final List<LeaseLossListener> listeners = new ArrayList<>(1);

  private volatile State state = State.HELD;
  private volatile LossReason lossReason;
  private volatile long deadlineNanos;
  private long lastRenewedAt;
  private long lastAttemptAt;

  ManagedLease(
      LeaseLifecycle lifecycle,
      String resource,
      FencingToken token,
      String leaseId,
      LeaseRequest request,
      long sentAtNanos) {
    this.lifecycle = lifecycle;
    this.resource = resource;
    this.token = token;
    this.leaseId = leaseId;
    this.value = leaseId + ":" + token.value();
    this.leaseTime = request.leaseTime();
    this.renewing = request.renewing();
    this.validityNanos = request.leaseTime().minus(request.safetyMargin()).toNanos();
    this.renewIntervalNanos = request.renewInterval().toNanos();
    // A renewal without an answer within this time is sent again, while the lease is still valid.
    this.retryNanos =
        Math.max(
            TimeUnit.MILLISECONDS.toNanos(1),
            Math.min(lifecycle.options().operationTimeout().toNanos(), renewIntervalNanos / 2));
    this.deadlineNanos = sentAtNanos + validityNanos;
    this.lastRenewedAt = sentAtNanos;
    this.lastAttemptAt = sentAtNanos;
  }

  String value() {
    return value;
  }

  /** When a new lease first needs the heartbeat: its first renewal, or its deadline. */
  long attentionAt() {
    synchronized (this) {
      return renewing ? earliest(deadlineNanos, lastRenewedAt + renewIntervalNanos) : deadlineNanos;
    }
  }

  long leaseMillis() {
    return leaseTime.toMillis();
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
    return leaseTime;
  }

  @Override
  public boolean isHeld() {
    return state == State.HELD && lifecycle.ticker().nanoTime() - deadlineNanos < 0;
  }

  @Override
  public void checkHeld() {
    if (isHeld()) {
      return;
    }
    String why =
        switch (state) {
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
  public void markLost(LossReason reason) {
    Objects.requireNonNull(reason, "reason");
    lose(reason);
  }

  @Override
  public void close() {
    release(Duration.ZERO);
  }

  @Override
  public void release(Duration keepLockedFor) {
    Objects.requireNonNull(keepLockedFor, "keepLockedFor");
    if (keepLockedFor.isNegative() || keepLockedFor.compareTo(leaseTime) > 0) {
      throw new IllegalArgumentException(
          "keepLockedFor must be between zero and the lease time ("
              + leaseTime
              + "), got "
              + keepLockedFor);
    }
    synchronized (this) {
      if (state != State.HELD) {
        return;
      }
      state = State.RELEASED;
    }
    lifecycle.forget(this);
    try {
      boolean deleted = lifecycle.releaseBlocking(this, keepLockedFor.toMillis());
      lifecycle.notifyObserver(() -> lifecycle.observer().onReleased(this, deleted));
    } catch (RuntimeException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      log.warn(
          "could not release the lease on \"{}\" (token {}); it expires after {}",
          resource,
          token,
          leaseTime,
          e);
      lifecycle.notifyObserver(() -> lifecycle.observer().onReleaseFailed(this, e));
    }
  }

  /**
   * Called by the sweep: reports the lease lost once its deadline has passed, and adds it to {@code
   * due} when a renewal should be sent. Returns when it next needs attention.
   */
  long sweep(long now, List<ManagedLease> due) {
    if (state != State.HELD) {
      lifecycle.forget(this);
      return now + IDLE_NANOS;
    }
    long deadline = deadlineNanos;
    if (now - deadline >= 0) {
      lose(renewing ? LossReason.RENEWAL_TIMEOUT : LossReason.EXPIRED);
      return now + IDLE_NANOS;
    }
    if (!renewing) {
      return deadline;
    }
    synchronized (this) {
      long nextRenewal = lastRenewedAt + renewIntervalNanos;
      long nextRetry = lastAttemptAt + retryNanos;
      if (now - nextRenewal >= 0 && now - nextRetry >= 0) {
        lastAttemptAt = now;
        due.add(this);
        nextRetry = now + retryNanos;
        return earliest(deadline, nextRetry);
      }
      return earliest(deadline, latest(nextRenewal, nextRetry));
    }
  }

  /** Called with the answer to a renewal sent at {@code sentAt}, on whatever thread got it. */
  void onRenewal(long sentAt, Boolean renewed, Throwable failure) {
    if (state != State.HELD) {
      return;
    }
    if (failure != null) {
      lifecycle.observe(() -> lifecycle.observer().onRenewalFailed(this, failure));
      return;
    }
    if (Boolean.TRUE.equals(renewed)) {
      synchronized (this) {
        long newDeadline = sentAt + validityNanos;
        if (newDeadline - deadlineNanos > 0) {
          deadlineNanos = newDeadline;
        }
        if (sentAt - lastRenewedAt > 0) {
          lastRenewedAt = sentAt;
        }
      }
      lifecycle.observe(() -> lifecycle.observer().onRenewed(this));
    } else {
      lose(LossReason.TAKEN_OVER);
    }
  }

  /** Marks the lease lost once, deletes its own lock if useful, and notifies off this thread. */
  void lose(LossReason reason) {
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
    lifecycle.forget(this);
    log.warn("lease on \"{}\" with token {} lost: {}", resource, token, reason);
    if (reason != LossReason.TAKEN_OVER && reason != LossReason.MANAGER_CLOSED) {
      // Our value is unique, so this compare-and-delete can only remove our own lock.
      lifecycle.releaseQuietly(resource, value);
    }
    lifecycle.observe(() -> lifecycle.observer().onLost(this, reason));
    for (LeaseLossListener listener : toNotify) {
      lifecycle.dispatch("lease loss listener", () -> listener.onLost(this, reason));
    }
  }

  private static long earliest(long a, long b) {
    return a - b <= 0 ? a : b;
  }

  private static long latest(long a, long b) {
    return a - b >= 0 ? a : b;
  }

  @Override
  public String toString() {
    return "Lease[resource=" + resource + ", token=" + token + ", state=" + state + "]";
  }
}
