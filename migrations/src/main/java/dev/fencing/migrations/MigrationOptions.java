package dev.fencing.migrations;

import dev.fencing.schema.FenceSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link FencingMigrations#migrate} does, validated when constructed: nothing invalid can
 * reach the database.
 *
 * <p>Table names are {@code table} or {@code schema.table}, each part a plain identifier {@code
 * [A-Za-z_][A-Za-z0-9_]*} of at most 63 characters. They are used exactly as written (quoted in
 * SQL, so case-sensitive); an unqualified name is resolved with the connection's {@code
 * search_path}.
 *
 * @param schema schema holding the fence table, the trigger functions and the {@code
 *     fencing_schema_history} table (default {@value FencingMigrations#DEFAULT_SCHEMA})
 * @param fencedTables tables that get the {@code fence_token} column
 * @param enforcedTables tables that also get the {@code fencing_enforce} trigger, with its mode;
 *     they get the column too, whether listed in {@code fencedTables} or not
 * @param lockTimeout {@code lock_timeout} for each DDL attempt on a user table (default 200 ms)
 * @param maxAttempts at most this many attempts per DDL statement (default 50)
 * @param maxTotalWait give up on a DDL statement once this much time was spent on it (default 30 s)
 */
public record MigrationOptions(
    String schema,
    List<String> fencedTables,
    Map<String, EnforcementMode> enforcedTables,
    Duration lockTimeout,
    int maxAttempts,
    Duration maxTotalWait) {

  /** Default {@code lock_timeout} per DDL attempt. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMillis(200);

  /** Default bound on attempts per DDL statement. */
  public static final int DEFAULT_MAX_ATTEMPTS = 50;

  /** Default bound on the time spent on one DDL statement. */
  public static final Duration DEFAULT_MAX_TOTAL_WAIT = Duration.ofSeconds(30);

  /**
   * Validates and copies the arguments.
   *
   * @param schema see {@link #schema()}
   * @param fencedTables see {@link #fencedTables()}
   * @param enforcedTables see {@link #enforcedTables()}
   * @param lockTimeout see {@link #lockTimeout()}
   * @param maxAttempts see {@link #maxAttempts()}
   * @param maxTotalWait see {@link #maxTotalWait()}
   * @throws IllegalArgumentException naming the bad value if the schema or a table name is not a
   *     plain identifier, or a timeout or bound is not positive
   * @throws NullPointerException if a list, map, mode or duration is null
   */
  public MigrationOptions {
    FenceSchema.requireIdentifier("schema name", schema);
    Objects.requireNonNull(fencedTables, "fencedTables");
    Objects.requireNonNull(enforcedTables, "enforcedTables");
    Objects.requireNonNull(lockTimeout, "lockTimeout");
    Objects.requireNonNull(maxTotalWait, "maxTotalWait");
    List<String> tables = new ArrayList<>(fencedTables.size());
    for (String table : fencedTables) {
      tables.add(FenceSchema.requireTableName(table));
    }
    Map<String, EnforcementMode> enforced = new LinkedHashMap<>();
    for (Map.Entry<String, EnforcementMode> e : enforcedTables.entrySet()) {
      FenceSchema.requireTableName(e.getKey());
      enforced.put(
          e.getKey(), Objects.requireNonNull(e.getValue(), "enforcement mode of " + e.getKey()));
    }
    if (lockTimeout.isNegative() || lockTimeout.isZero() || lockTimeout.toMillis() < 1) {
      throw new IllegalArgumentException("lockTimeout must be at least 1 ms: " + lockTimeout);
    }
    if (lockTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("lockTimeout must be at most 10 minutes: " + lockTimeout);
    }
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
    }
    if (maxTotalWait.isNegative() || maxTotalWait.isZero()) {
      throw new IllegalArgumentException("maxTotalWait must be positive: " + maxTotalWait);
    }
    fencedTables = List.copyOf(tables);
    enforcedTables = Collections.unmodifiableMap(enforced);
  }

  /**
   * Starts a builder with the defaults: schema {@value FencingMigrations#DEFAULT_SCHEMA}, no
   * tables, 200 ms lock timeout, 50 attempts, 30 s.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder for {@link MigrationOptions}; {@link #build()} validates. */
  public static final class Builder {
    private String schema = FencingMigrations.DEFAULT_SCHEMA;
    private final List<String> fencedTables = new ArrayList<>();
    private final Map<String, EnforcementMode> enforcedTables = new LinkedHashMap<>();
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration maxTotalWait = DEFAULT_MAX_TOTAL_WAIT;

    private Builder() {}

    /**
     * Sets the fencing schema.
     *
     * @param schema a plain identifier
     * @return this builder
     */
    public Builder schema(String schema) {
      this.schema = schema;
      return this;
    }

    /**
     * Adds tables that get the {@code fence_token} column.
     *
     * @param tables {@code table} or {@code schema.table} names
     * @return this builder
     */
    public Builder fence(String... tables) {
      fencedTables.addAll(java.util.Arrays.asList(tables));
      return this;
    }

    /**
     * Adds a table that gets the column and the {@code fencing_enforce} trigger.
     *
     * @param table {@code table} or {@code schema.table}
     * @param mode how token-less writes are treated
     * @return this builder
     */
    public Builder enforce(String table, EnforcementMode mode) {
      enforcedTables.put(table, mode);
      return this;
    }

    /**
     * Sets the {@code lock_timeout} of each DDL attempt.
     *
     * @param lockTimeout at least 1 ms, at most 10 minutes
     * @return this builder
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * Sets the maximum number of attempts per DDL statement.
     *
     * @param maxAttempts at least 1
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Sets the maximum time spent on one DDL statement, retries included.
     *
     * @param maxTotalWait positive
     * @return this builder
     */
    public Builder maxTotalWait(Duration maxTotalWait) {
      this.maxTotalWait = maxTotalWait;
      return this;
    }

    /**
     * Builds the options.
     *
     * @return validated, immutable options
     * @throws IllegalArgumentException naming the bad value if anything is invalid
     * @throws NullPointerException if a duration or mode is null
     */
    public MigrationOptions build() {
      return new MigrationOptions(
          schema, fencedTables, enforcedTables, lockTimeout, maxAttempts, maxTotalWait);
    }
  }
}
