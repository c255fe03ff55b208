package dev.fencing.core;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of a {@link LeaseManager}, validated on construction.
 *
 * <p>Start from {@link #defaults()} or {@link #ofLeaseTime(Duration)} and adjust with the {@code
 * with...} methods:
 *
 * <pre>{@code
 * LeaseOptions options = LeaseOptions.ofLeaseTime(Duration.ofSeconds(10)).withKeyPrefix("billing:");
 * }</pre>
 *
 * @param leaseTime how long the lock lives on the server after acquisition and after each renewal
 * @param renewInterval how often a held lease renews itself; shorter than the lease time
 * @param safetyMargin how much earlier than the server-side expiry the holder gives up its own
 *     claim when renewals fail; zero or positive, and {@code renewInterval + safetyMargin <
 *     leaseTime}
 * @param operationTimeout the bound for one blocking call to Redis (acquire, release); a call that
 *     takes longer fails with {@link LeaseBackendException}
 * @param keyPrefix prefix of every Redis key, at most 64 characters, without braces or whitespace
 */
public record LeaseOptions(
    Duration leaseTime,
    Duration renewInterval,
    Duration safetyMargin,
    Duration operationTimeout,
    String keyPrefix) {

  /** The default lease time: 30 seconds. */
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);

  /** The default operation timeout: 5 seconds. */
  public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(5);

  /** The default key prefix: {@code "fencing:"}. */
  public static final String DEFAULT_KEY_PREFIX = "fencing:";

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{0,64}");

  /**
   * Validates the options.
   *
   * @throws NullPointerException if any argument is null
   * @throws IllegalArgumentException if a duration is not positive (the safety margin may be zero),
   *     the renewal interval plus the safety margin is not shorter than the lease time, or the key
   *     prefix is too long or contains characters other than {@code A-Z a-z 0-9 _ . : / -}
   */
  public LeaseOptions {
    Objects.requireNonNull(leaseTime, "leaseTime");
    Objects.requireNonNull(renewInterval, "renewInterval");
    Objects.requireNonNull(safetyMargin, "safetyMargin");
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    requirePositive("leaseTime", leaseTime);
    requirePositive("renewInterval", renewInterval);
    requirePositive("operationTimeout", operationTimeout);
    if (leaseTime.toMillis() < 10) {
      throw new IllegalArgumentException("leaseTime must be at least 10ms, got " + leaseTime);
    }
    if (safetyMargin.isNegative()) {
      throw new IllegalArgumentException("safetyMargin must not be negative, got " + safetyMargin);
    }
    if (renewInterval.plus(safetyMargin).compareTo(leaseTime) >= 0) {
      throw new IllegalArgumentException(
          "renewInterval ("
              + renewInterval
              + ") plus safetyMargin ("
              + safetyMargin
              + ") must be shorter than leaseTime ("
              + leaseTime
              + ")");
    }
    if (!PREFIX.matcher(keyPrefix).matches()) {
      throw new IllegalArgumentException(
          "keyPrefix must be at most 64 characters from A-Z a-z 0-9 _ . : / -, got \""
              + keyPrefix
              + "\"");
    }
  }

  /** Returns the defaults: a 30 s lease renewed every 10 s, 3 s safety margin, 5 s timeout. */
  public static LeaseOptions defaults() {
    return ofLeaseTime(DEFAULT_LEASE_TIME);
  }

  /**
   * Returns options with the given lease time, renewal every third of it, a safety margin of a
   * tenth of it, and the default timeout and prefix.
   *
   * @param leaseTime the lease time
   * @return the options
   * @throws NullPointerException if {@code leaseTime} is null
   * @throws IllegalArgumentException if {@code leaseTime} is shorter than 10ms
   */
  public static LeaseOptions ofLeaseTime(Duration leaseTime) {
    Objects.requireNonNull(leaseTime, "leaseTime");
    requirePositive("leaseTime", leaseTime);
    return new LeaseOptions(
        leaseTime,
        leaseTime.dividedBy(3),
        leaseTime.dividedBy(10),
        DEFAULT_OPERATION_TIMEOUT,
        DEFAULT_KEY_PREFIX);
  }

  /**
   * Returns a copy with another lease time, keeping the other values.
   *
   * @param leaseTime the lease time
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withLeaseTime(Duration leaseTime) {
    return new LeaseOptions(leaseTime, renewInterval, safetyMargin, operationTimeout, keyPrefix);
  }

  /**
   * Returns a copy with another renewal interval.
   *
   * @param renewInterval the renewal interval
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withRenewInterval(Duration renewInterval) {
    return new LeaseOptions(leaseTime, renewInterval, safetyMargin, operationTimeout, keyPrefix);
  }

  /**
   * Returns a copy with another safety margin.
   *
   * @param safetyMargin the safety margin
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withSafetyMargin(Duration safetyMargin) {
    return new LeaseOptions(leaseTime, renewInterval, safetyMargin, operationTimeout, keyPrefix);
  }

  /**
   * Returns a copy with another operation timeout.
   *
   * @param operationTimeout the bound for one blocking call to Redis
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withOperationTimeout(Duration operationTimeout) {
    return new LeaseOptions(leaseTime, renewInterval, safetyMargin, operationTimeout, keyPrefix);
  }

  /**
   * Returns a copy with another key prefix.
   *
   * @param keyPrefix the key prefix
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withKeyPrefix(String keyPrefix) {
    return new LeaseOptions(leaseTime, renewInterval, safetyMargin, operationTimeout, keyPrefix);
  }

  private static void requirePositive(String name, Duration value) {
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
  }
}
