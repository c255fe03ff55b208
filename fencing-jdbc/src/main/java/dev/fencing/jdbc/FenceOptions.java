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
 *     waits for in-flight writes of the previous holder, and retries after this. At least 1 ms;
 *     PostgreSQL counts it in whole milliseconds, so a fraction is rounded up
 * @param registrationTimeout give up registering after this long in total; at least 1 ms
 * @param triggerMode whether fenced connections carry the registration as settings for the
 *     enforcement trigger installed by the {@code migrations} module; needed when fenced tables
 *     have the trigger, and costs one round trip per transaction (in auto-commit mode each
 *     statement runs in a transaction of its own: two extra round trips per statement); the
 *     settings are transaction-local, so they never outlive the transaction
 * @param endStaleBlockers whether a registration that has waited one lease time (the registering
 *     lease's) for the fence row ends, with {@code pg_terminate_backend} (MariaDB: {@code KILL
 *     CONNECTION}), the sessions that still lock the row for an older registration (a holder frozen
 *     in a long statement, or whose client stopped reading a result); see {@link
 *     ResourceFence#register} and docs/mariadb.md
 * @param plainSql what happens to a DAO's plain SQL that may write a fenced table inside a scope:
 *     {@link PlainSql#REWRITE} (the default) rewrites what it can prove into the guarded form and
 *     refuses the rest, and needs jOOQ on the class path, which {@link
 *     FencedDataSource#wrap(javax.sql.DataSource, FenceOptions)} checks; {@link PlainSql#REFUSE}
 *     refuses every such statement and needs nothing. On MariaDB plain SQL is never rewritten: both
 *     refuse. See docs/plain-sql.md
 */
public record FenceOptions(
    String schema,
    Duration registrationLockTimeout,
    Duration registrationTimeout,
    boolean triggerMode,
    boolean endStaleBlockers,
    PlainSql plainSql) {

  /** What happens to plain SQL that may write a fenced table inside a scope. */
  public enum PlainSql {
    /**
     * An UPDATE, DELETE, INSERT or upsert of one fenced table that the library can prove it reads
     * as the database will is rewritten into its guarded form; anything else that may write a
     * fenced table is refused. Needs jOOQ (its parser) on the class path.
     */
    REWRITE,
    /** Every plain statement that may write a fenced table is refused before it is sent. */
    REFUSE
  }

  /** PostgreSQL's largest {@code lock_timeout}: {@code INT_MAX} milliseconds. */
  private static final Duration MAX_LOCK_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);

  /** The default fence schema. */
  public static final String DEFAULT_SCHEMA = FenceSchema.DEFAULT_SCHEMA;

  /**
   * Validates the options.
   *
   * @param schema see {@link #schema()}
   * @param registrationLockTimeout see {@link #registrationLockTimeout()}
   * @param registrationTimeout see {@link #registrationTimeout()}
   * @param triggerMode see {@link #triggerMode()}
   * @param endStaleBlockers see {@link #endStaleBlockers()}
   * @param plainSql see {@link #plainSql()}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the schema is not a plain identifier, a duration is shorter
   *     than 1 ms (PostgreSQL counts {@code lock_timeout} in milliseconds, and {@code 0} would mean
   *     "wait forever"), or {@code registrationLockTimeout} is above {@code Integer.MAX_VALUE} ms
   */
  public FenceOptions {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(registrationLockTimeout, "registrationLockTimeout");
    Objects.requireNonNull(registrationTimeout, "registrationTimeout");
    Objects.requireNonNull(plainSql, "plainSql");
    FenceSql.requireIdentifier("schema", schema);
    requireAtLeastOneMilli("registrationLockTimeout", registrationLockTimeout);
    requireAtLeastOneMilli("registrationTimeout", registrationTimeout);
    if (registrationLockTimeout.compareTo(MAX_LOCK_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "registrationLockTimeout must be at most "
              + MAX_LOCK_TIMEOUT
              + " (PostgreSQL's largest lock_timeout), got "
              + registrationLockTimeout);
    }
  }

  /**
   * Creates options that rewrite plain SQL ({@link PlainSql#REWRITE}).
   *
   * @param schema see {@link #schema()}
   * @param registrationLockTimeout see {@link #registrationLockTimeout()}
   * @param registrationTimeout see {@link #registrationTimeout()}
   * @param triggerMode see {@link #triggerMode()}
   * @param endStaleBlockers see {@link #endStaleBlockers()}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public FenceOptions(
      String schema,
      Duration registrationLockTimeout,
      Duration registrationTimeout,
      boolean triggerMode,
      boolean endStaleBlockers) {
    this(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        PlainSql.REWRITE);
  }

  /**
   * Creates options that end stale blockers after one lease time.
   *
   * @param schema see {@link #schema()}
   * @param registrationLockTimeout see {@link #registrationLockTimeout()}
   * @param registrationTimeout see {@link #registrationTimeout()}
   * @param triggerMode see {@link #triggerMode()}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public FenceOptions(
      String schema,
      Duration registrationLockTimeout,
      Duration registrationTimeout,
      boolean triggerMode) {
    this(schema, registrationLockTimeout, registrationTimeout, triggerMode, true);
  }

  /**
   * {@return the defaults: schema {@code fencing}, registration attempts of 1 s for 2 min in total,
   * no trigger mode, stale blockers ended after one lease time, plain SQL rewritten}
   */
  public static FenceOptions defaults() {
    return new FenceOptions(
        DEFAULT_SCHEMA,
        Duration.ofSeconds(1),
        Duration.ofMinutes(2),
        false,
        true,
        PlainSql.REWRITE);
  }

  /**
   * Returns a copy with trigger mode switched on or off.
   *
   * @param triggerMode whether connections carry the registration for the enforcement trigger
   * @return the new options
   */
  public FenceOptions withTriggerMode(boolean triggerMode) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  /**
   * Returns a copy with another schema.
   *
   * @param schema the fence schema
   * @return the new options
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   */
  public FenceOptions withSchema(String schema) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  /**
   * Returns a copy with another total registration timeout.
   *
   * @param registrationTimeout the bound
   * @return the new options
   * @throws IllegalArgumentException if shorter than 1 ms
   */
  public FenceOptions withRegistrationTimeout(Duration registrationTimeout) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  /**
   * Returns a copy with another per-attempt lock timeout.
   *
   * @param registrationLockTimeout the bound of one attempt
   * @return the new options
   * @throws IllegalArgumentException if shorter than 1 ms or above Integer.MAX_VALUE ms
   */
  public FenceOptions withRegistrationLockTimeout(Duration registrationLockTimeout) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  /**
   * Returns a copy that does or does not end stale blockers of the fence row after one lease time.
   *
   * @param endStaleBlockers whether registration ends them
   * @return the new options
   */
  public FenceOptions withEndStaleBlockers(boolean endStaleBlockers) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  /**
   * Returns a copy with another choice for plain SQL.
   *
   * @param plainSql rewrite (needs jOOQ) or refuse plain writes of fenced tables
   * @return the new options
   * @throws NullPointerException if {@code plainSql} is null
   */
  public FenceOptions withPlainSql(PlainSql plainSql) {
    return new FenceOptions(
        schema,
        registrationLockTimeout,
        registrationTimeout,
        triggerMode,
        endStaleBlockers,
        plainSql);
  }

  private static void requireAtLeastOneMilli(String name, Duration duration) {
    if (duration.compareTo(Duration.ofMillis(1)) < 0) {
      throw new IllegalArgumentException(
          name
              + " must be at least 1 ms (PostgreSQL counts lock_timeout in whole milliseconds and"
              + " takes 0 as no timeout at all), got "
              + duration);
    }
  }
}
