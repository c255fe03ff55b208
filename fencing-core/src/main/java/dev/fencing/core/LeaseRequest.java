package dev.fencing.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What one acquisition asks for: how long the lock lives on the server, how long to wait for it,
 * and whether it renews itself. Validated on construction.
 *
 * <p>Start from {@link #forLeaseTime(Duration)}, which names the lease time, and add the wait:
 *
 * <pre>{@code
 * LeaseRequest request =
 *     LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10));
 * }</pre>
 *
 * <p>A renewing lease renews itself every third of its lease time until it is released or lost. A
 * {@linkplain #withoutRenewal() non-renewing} lease is never extended: it ends after its lease time
 * (it is then reported lost with {@link LossReason#EXPIRED}) unless released before.
 *
 * @param leaseTime how long the lock lives on the server after acquisition and after each renewal;
 *     at least 10 ms and at most {@link #MAX_DURATION}
 * @param maxWait how long {@code acquire} waits at most for the current holder to release or
 *     expire; zero means do not wait; at most {@link #MAX_DURATION}
 * @param renewing whether the lease renews itself on the manager's heartbeat
 * @param safetyMargin how much earlier than the server-side expiry the holder stops considering
 *     itself the owner when no renewal succeeded; positive and shorter than two thirds of the lease
 *     time (the renewal interval plus the margin must be shorter than the lease time)
 */
public record LeaseRequest(
    Duration leaseTime, Duration maxWait, boolean renewing, Duration safetyMargin) {

  /** The longest lease time or wait accepted: 365 days. */
  public static final Duration MAX_DURATION = Duration.ofDays(365);

  /** The shortest lease time accepted: 10 ms. */
  public static final Duration MIN_LEASE_TIME = Duration.ofMillis(10);

  /**
   * Validates the request.
   *
   * @param leaseTime see {@link #leaseTime()}
   * @param maxWait see {@link #maxWait()}
   * @param renewing see {@link #renewing()}
   * @param safetyMargin see {@link #safetyMargin()}
   * @throws NullPointerException if a duration is null
   * @throws IllegalArgumentException if the lease time is shorter than 10 ms or longer than {@link
   *     #MAX_DURATION}, the wait is negative or longer than {@link #MAX_DURATION}, or the safety
   *     margin is not positive or not shorter than the lease time minus the renewal interval
   */
  public LeaseRequest {
    Objects.requireNonNull(leaseTime, "leaseTime");
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(safetyMargin, "safetyMargin");
    if (leaseTime.compareTo(MIN_LEASE_TIME) < 0) {
      throw new IllegalArgumentException("leaseTime must be at least 10ms, got " + leaseTime);
    }
    requireAtMostMax("leaseTime", leaseTime);
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must not be negative, got " + maxWait);
    }
    requireAtMostMax("maxWait", maxWait);
    if (safetyMargin.isZero() || safetyMargin.isNegative()) {
      throw new IllegalArgumentException(
          "safetyMargin must be positive (loss is reported before the server expires the lock),"
              + " got "
              + safetyMargin);
    }
    Duration renewInterval = leaseTime.dividedBy(3);
    if (renewInterval.plus(safetyMargin).compareTo(leaseTime) >= 0) {
      throw new IllegalArgumentException(
          "safetyMargin ("
              + safetyMargin
              + ") must be shorter than leaseTime ("
              + leaseTime
              + ") minus the renewal interval ("
              + renewInterval
              + ")");
    }
  }

  /**
   * Returns a request for a renewing lease with the given lease time, no wait, and a safety margin
   * of a tenth of the lease time.
   *
   * @param leaseTime how long the lock lives on the server after acquisition and each renewal
   * @return the request
   * @throws NullPointerException if {@code leaseTime} is null
   * @throws IllegalArgumentException if {@code leaseTime} is shorter than 10 ms or longer than
   *     {@link #MAX_DURATION}
   */
  public static LeaseRequest forLeaseTime(Duration leaseTime) {
    Objects.requireNonNull(leaseTime, "leaseTime");
    return new LeaseRequest(leaseTime, Duration.ZERO, true, leaseTime.dividedBy(10));
  }

  /**
   * Returns a copy that waits up to {@code maxWait} for the current holder.
   *
   * @param maxWait the longest wait; zero means do not wait
   * @return the new request
   * @throws NullPointerException if {@code maxWait} is null
   * @throws IllegalArgumentException if {@code maxWait} is negative or longer than {@link
   *     #MAX_DURATION}
   */
  public LeaseRequest withMaxWait(Duration maxWait) {
    return new LeaseRequest(leaseTime, maxWait, renewing, safetyMargin);
  }

  /**
   * Returns a copy for a lease that is never renewed: it ends after its lease time unless released
   * before, and is then reported lost with {@link LossReason#EXPIRED}.
   *
   * @return the new request
   */
  public LeaseRequest withoutRenewal() {
    return new LeaseRequest(leaseTime, maxWait, false, safetyMargin);
  }

  /**
   * Returns a copy with another safety margin.
   *
   * @param safetyMargin the safety margin
   * @return the new request
   * @throws NullPointerException if {@code safetyMargin} is null
   * @throws IllegalArgumentException if the margin is not positive or too long for the lease time
   */
  public LeaseRequest withSafetyMargin(Duration safetyMargin) {
    return new LeaseRequest(leaseTime, maxWait, renewing, safetyMargin);
  }

  /** {@return how often a renewing lease renews itself: a third of the lease time} */
  public Duration renewInterval() {
    return leaseTime.dividedBy(3);
  }

  private static void requireAtMostMax(String name, Duration value) {
    if (value.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException(
          name + " must be at most " + MAX_DURATION.toDays() + " days, got " + value);
    }
  }
}
