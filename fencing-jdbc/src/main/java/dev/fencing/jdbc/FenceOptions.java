package dev.fencing.jdbc;

import dev.fencing.jdbc.internal.FenceSql;
import dev.fencing.schema.FenceSchema;
import java.time.Duration;
import java.util.Objects;

/**
 * Where the fence lives and how registration waits, validated on construction.
 *
 * @param schema the schema of the fence table created by the {@code migrations} module, a plain
 *     identifier (default {@code fencing})
 * @param registrationLockTimeout {@code lock_timeout} of one registration attempt; a registration
 *     waits for in-flight writes of the previous holder, and retries after this
 * @param registrationTimeout give up registering after this long in total
 * @param triggerMode whether fenced connections carry the registration as settings for the
 *     enforcement trigger installed by the {@code migrations} module; needed when fenced tables
 *     have the trigger, and costs one round trip per transaction (in auto-commit mode each
 *     statement runs in a transaction of its own: two extra round trips per statement); the
 *     settings are transaction-local, so they never outlive the transaction
 */
public record FenceOptions(
    String schema,
    Duration registrationLockTimeout,
    Duration registrationTimeout,
    boolean triggerMode) {

  /** The default fence schema. */
  public static final String DEFAULT_SCHEMA = FenceSchema.DEFAULT_SCHEMA;

  /**
   * Validates the options.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the schema is not a plain identifier or a duration is not
   *     positive
   */
  public FenceOptions {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(registrationLockTimeout, "registrationLockTimeout");
    Objects.requireNonNull(registrationTimeout, "registrationTimeout");
    FenceSql.requireIdentifier("schema", schema);
    if (registrationLockTimeout.isZero() || registrationLockTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "registrationLockTimeout must be positive, got " + registrationLockTimeout);
    }
    if (registrationTimeout.isZero() || registrationTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "registrationTimeout must be positive, got " + registrationTimeout);
    }
  }

  /**
   * Returns the defaults: schema {@code fencing}, registration attempts of 1 s for 2 min in total,
   * no trigger mode.
   */
  public static FenceOptions defaults() {
    return new FenceOptions(DEFAULT_SCHEMA, Duration.ofSeconds(1), Duration.ofMinutes(2), false);
  }

  /**
   * Returns a copy with trigger mode switched on or off.
   *
   * @param triggerMode whether connections carry the registration for the enforcement trigger
   * @return the new options
   */
  public FenceOptions withTriggerMode(boolean triggerMode) {
    return new FenceOptions(schema, registrationLockTimeout, registrationTimeout, triggerMode);
  }

  /**
   * Returns a copy with another schema.
   *
   * @param schema the fence schema
   * @return the new options
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   */
  public FenceOptions withSchema(String schema) {
    return new FenceOptions(schema, registrationLockTimeout, registrationTimeout, triggerMode);
  }

  /**
   * Returns a copy with another total registration timeout.
   *
   * @param registrationTimeout the bound
   * @return the new options
   * @throws IllegalArgumentException if not positive
   */
  public FenceOptions withRegistrationTimeout(Duration registrationTimeout) {
    return new FenceOptions(schema, registrationLockTimeout, registrationTimeout, triggerMode);
  }

  /**
   * Returns a copy with another per-attempt lock timeout.
   *
   * @param registrationLockTimeout the bound of one attempt
   * @return the new options
   * @throws IllegalArgumentException if not positive
   */
  public FenceOptions withRegistrationLockTimeout(Duration registrationLockTimeout) {
    return new FenceOptions(schema, registrationLockTimeout, registrationTimeout, triggerMode);
  }
}
