package dev.fencing.core;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of a {@link LeaseManager}, validated on construction. The lease time and the
 * wait are not here: each acquisition names them in its {@link LeaseRequest}.
 *
 * <pre>{@code
 * LeaseOptions options = LeaseOptions.defaults().withKeyPrefix("billing:");
 * }</pre>
 *
 * @param operationTimeout the bound for one call to Redis (an acquire attempt, a renewal, a
 *     release); a blocking call that takes longer fails with {@link LeaseBackendException}, and a
 *     renewal that takes longer is sent again
 * @param keyPrefix prefix of every Redis key, at most 64 characters, without braces or whitespace
 */
public record LeaseOptions(Duration operationTimeout, String keyPrefix) {

  /** The default operation timeout: 5 seconds. */
  public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(5);

  /** The default key prefix: {@code "fencing:"}. */
  public static final String DEFAULT_KEY_PREFIX = "fencing:";

  /** The longest operation timeout accepted: 1 hour. */
  public static final Duration MAX_OPERATION_TIMEOUT = Duration.ofHours(1);

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.:/-]{0,64}");

  /**
   * Validates the options.
   *
   * @param operationTimeout see {@link #operationTimeout()}
   * @param keyPrefix see {@link #keyPrefix()}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the operation timeout is not positive or longer than {@link
   *     #MAX_OPERATION_TIMEOUT}, or the key prefix is too long or contains characters other than
   *     {@code A-Z a-z 0-9 _ . : / -}
   */
  public LeaseOptions {
    Objects.requireNonNull(operationTimeout, "operationTimeout");
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    if (operationTimeout.isZero() || operationTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "operationTimeout must be positive, got " + operationTimeout);
    }
    if (operationTimeout.compareTo(MAX_OPERATION_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "operationTimeout must be at most "
              + MAX_OPERATION_TIMEOUT
              + ", got "
              + operationTimeout);
    }
    if (!PREFIX.matcher(keyPrefix).matches()) {
      throw new IllegalArgumentException(
          "keyPrefix must be at most 64 characters from A-Z a-z 0-9 _ . : / -, got \""
              + keyPrefix
              + "\"");
    }
  }

  /** {@return the defaults: a 5 s operation timeout and the key prefix {@code "fencing:"}} */
  public static LeaseOptions defaults() {
    return new LeaseOptions(DEFAULT_OPERATION_TIMEOUT, DEFAULT_KEY_PREFIX);
  }

  /**
   * Returns a copy with another operation timeout.
   *
   * @param operationTimeout the bound for one call to Redis
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withOperationTimeout(Duration operationTimeout) {
    return new LeaseOptions(operationTimeout, keyPrefix);
  }

  /**
   * Returns a copy with another key prefix.
   *
   * @param keyPrefix the key prefix
   * @return the new options
   * @throws IllegalArgumentException if the result is invalid
   */
  public LeaseOptions withKeyPrefix(String keyPrefix) {
    return new LeaseOptions(operationTimeout, keyPrefix);
  }
}
