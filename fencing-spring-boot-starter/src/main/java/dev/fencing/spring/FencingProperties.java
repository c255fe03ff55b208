package dev.fencing.spring;

import dev.fencing.core.LeaseOptions;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.migrations.EnforcementMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fencing.*} properties of the starter.
 *
 * <p>Invalid values are reported when the context starts, by the library's own option records.
 */
@ConfigurationProperties(prefix = "fencing")
public class FencingProperties {

  /** Whether the starter configures anything at all. */
  private boolean enabled = true;

  /**
   * Whether to lock only: {@code @Fenced} methods and the ShedLock provider still acquire and
   * release their leases (one holder at a time, as long as leases hold), but the DataSource is not
   * wrapped and leases are not registered in the fence, so the database does not stop a stale
   * holder's writes. {@code fencing.enabled=false} instead removes the lock too.
   */
  private boolean lockOnly;

  /**
   * Schema of the fence table, the trigger functions and the fencing migrations' history table; the
   * same for the DataSource wrapper and the migrations.
   */
  private String schema = FenceOptions.DEFAULT_SCHEMA;

  /**
   * Whether fenced connections carry the lease as settings for the enforcement trigger: needed for
   * writes the library never sees (JdbcTemplate, JPA/Hibernate, Spring Data) on tables with the
   * trigger. Unset: on exactly when {@code fencing.migrations.enforce} names a table.
   */
  private Boolean triggerMode;

  /**
   * What happens to plain SQL (JdbcTemplate, JPA/Hibernate, Spring Data) that may write a fenced
   * table inside a scope: {@code rewrite} (the default) rewrites what the library can prove into
   * the guarded form and needs jOOQ ({@code org.jooq:jooq}) on the class path, checked at startup;
   * {@code refuse} refuses such statements (use trigger mode, {@code GuardedStatements} or {@code
   * FencedDsl} for those writes).
   */
  private FenceOptions.PlainSql plainSql = FenceOptions.PlainSql.REWRITE;

  /** Prefix of every Redis key of the lease manager. */
  private String keyPrefix = LeaseOptions.DEFAULT_KEY_PREFIX;

  /** Bound of one call to Redis (an acquire attempt, a renewal, a release). */
  private Duration operationTimeout = LeaseOptions.DEFAULT_OPERATION_TIMEOUT;

  /** Lock timeout of one registration attempt in the fence. */
  private Duration registrationLockTimeout = FenceOptions.defaults().registrationLockTimeout();

  /** Give up registering a lease in the fence after this long in total. */
  private Duration registrationTimeout = FenceOptions.defaults().registrationTimeout();

  /**
   * Whether a registration that waited one lease time for the fence row ends the sessions that
   * still lock it for an older registration.
   */
  private boolean endStaleBlockers = true;

  /**
   * What happens, in the default mode, to a write on a fenced table made outside any fencing scope
   * (nothing fences it; a self-invoked {@code @Fenced} method is the usual cause): {@code warn}
   * (the default) logs it once per table and call site, {@code refuse} refuses it before it reaches
   * the database, {@code ignore} lets it run unnoticed. Not checked in trigger mode, where the
   * enforcement trigger decides.
   */
  private UnscopedWrites unscopedWrites = UnscopedWrites.WARN;

  /** What happens to a write on a fenced table made outside any fencing scope. */
  public enum UnscopedWrites {
    /** Logged once per table and call site (rate-limited); the write runs. */
    WARN,
    /** Refused before it reaches the database, with {@link UnfencedWriteRefusedException}. */
    REFUSE,
    /** Not checked. */
    IGNORE
  }

  private final Migrations migrations = new Migrations();

  private final Metrics metrics = new Metrics();

  private final ShedLock shedlock = new ShedLock();

  private final Test test = new Test();

  /** Test support, configured when fencing-test-support is on the class path. */
  public static class Test {

    /**
     * Whether the lease manager is a fenced in-memory one (no Redis, no RedissonClient bean needed)
     * and a StaleWriterProbe bean on the fenced DataSource is defined: for Spring Boot tests only.
     */
    private boolean inMemoryLeases = false;

    /**
     * {@return whether the lease manager is a fenced in-memory one (no Redis, no RedissonClient
     * bean needed) and a StaleWriterProbe bean on the fenced DataSource is defined}
     */
    public boolean isInMemoryLeases() {
      return inMemoryLeases;
    }

    /**
     * @param inMemoryLeases whether the lease manager is a fenced in-memory one (no Redis, no
     *     RedissonClient bean needed) and a StaleWriterProbe bean on the fenced DataSource is
     *     defined
     */
    public void setInMemoryLeases(boolean inMemoryLeases) {
      this.inMemoryLeases = inMemoryLeases;
    }
  }

  /** The meters, wired when fencing-micrometer is present and there is a MeterRegistry bean. */
  public static class Metrics {

    /** Whether the starter publishes the meters. */
    private boolean enabled = true;

    /**
     * Whether every meter carries the tag {@code resource}: one time series per resource name, so
     * only for a small, fixed set of resources.
     */
    private boolean tagResource = false;

    /** {@return whether the starter publishes the meters} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * @param enabled whether the starter publishes the meters
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return whether every meter carries the tag {@code resource}} */
    public boolean isTagResource() {
      return tagResource;
    }

    /**
     * @param tagResource whether every meter carries the tag {@code resource}
     */
    public void setTagResource(boolean tagResource) {
      this.tagResource = tagResource;
    }
  }

  /** The ShedLock LockProvider, configured when fencing-shedlock is present and none is defined. */
  public static class ShedLock {

    /** Whether the starter configures the fenced ShedLock LockProvider. */
    private boolean enabled = true;

    /** Put before every lock name to make the resource name; empty by default. */
    private String resourcePrefix = "";

    /** Whether the lease renews itself while the task runs (instead of KeepAliveLockProvider). */
    private boolean keepAlive = false;

    /** {@return whether the starter configures the fenced ShedLock LockProvider} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * @param enabled whether the starter configures the fenced ShedLock LockProvider
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** {@return the prefix put before every lock name to make the resource name} */
    public String getResourcePrefix() {
      return resourcePrefix;
    }

    /**
     * @param resourcePrefix the prefix put before every lock name to make the resource name
     */
    public void setResourcePrefix(String resourcePrefix) {
      this.resourcePrefix = resourcePrefix;
    }

    /**
     * {@return whether the lease renews itself while the task runs (instead of
     * KeepAliveLockProvider)}
     */
    public boolean isKeepAlive() {
      return keepAlive;
    }

    /**
     * @param keepAlive whether the lease renews itself while the task runs (instead of
     *     KeepAliveLockProvider)
     */
    public void setKeepAlive(boolean keepAlive) {
      this.keepAlive = keepAlive;
    }
  }

  /** The fence migrations run after the application's own Flyway migrations. */
  public static class Migrations {

    /** Whether the starter applies the fence migrations at startup. */
    private boolean enabled = true;

    /** Tables that get the {@code fence_token} column ({@code table} or {@code schema.table}). */
    private List<String> tables = new ArrayList<>();

    /** Tables that also get the {@code fencing_enforce} trigger. */
    private List<String> enforce = new ArrayList<>();

    /** How the trigger treats a write that carries no lease. */
    private EnforcementMode enforcementMode = EnforcementMode.STRICT;

    /** {@return whether the starter applies the fence migrations at startup} */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * @param enabled whether the starter applies the fence migrations at startup
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * {@return the tables that get the {@code fence_token} column ({@code table} or {@code
     * schema.table})}
     */
    public List<String> getTables() {
      return tables;
    }

    /**
     * @param tables the tables that get the {@code fence_token} column ({@code table} or {@code
     *     schema.table})
     */
    public void setTables(List<String> tables) {
      this.tables = tables;
    }

    /** {@return the tables that also get the {@code fencing_enforce} trigger} */
    public List<String> getEnforce() {
      return enforce;
    }

    /**
     * @param enforce the tables that also get the {@code fencing_enforce} trigger
     */
    public void setEnforce(List<String> enforce) {
      this.enforce = enforce;
    }

    /** {@return how the trigger treats a write that carries no lease} */
    public EnforcementMode getEnforcementMode() {
      return enforcementMode;
    }

    /**
     * @param enforcementMode how the trigger treats a write that carries no lease
     */
    public void setEnforcementMode(EnforcementMode enforcementMode) {
      this.enforcementMode = enforcementMode;
    }
  }

  /** {@return the fence options these properties describe} */
  public FenceOptions toFenceOptions() {
    return new FenceOptions(
            schema,
            registrationLockTimeout,
            registrationTimeout,
            effectiveTriggerMode(),
            endStaleBlockers)
        .withPlainSql(plainSql);
  }

  /** {@return the lease manager options these properties describe} */
  public LeaseOptions toLeaseOptions() {
    return new LeaseOptions(operationTimeout, keyPrefix);
  }

  /** {@return the trigger mode: as set, or on when some table is enforced} */
  public boolean effectiveTriggerMode() {
    return triggerMode != null ? triggerMode : !migrations.getEnforce().isEmpty();
  }

  /** {@return whether the starter configures anything at all} */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * @param enabled whether the starter configures anything at all
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /** {@return whether to lock only} */
  public boolean isLockOnly() {
    return lockOnly;
  }

  /**
   * @param lockOnly whether to lock only
   */
  public void setLockOnly(boolean lockOnly) {
    this.lockOnly = lockOnly;
  }

  /**
   * {@return the schema of the fence table, the trigger functions and the fencing migrations'
   * history table}
   */
  public String getSchema() {
    return schema;
  }

  /**
   * @param schema the schema of the fence table, the trigger functions and the fencing migrations'
   *     history table
   */
  public void setSchema(String schema) {
    this.schema = schema;
  }

  /**
   * {@return whether fenced connections carry the lease as settings for the enforcement trigger, or
   * null when unset}
   */
  public Boolean getTriggerMode() {
    return triggerMode;
  }

  /**
   * {@return what happens to plain SQL (JdbcTemplate, JPA/Hibernate, Spring Data) that may write a
   * fenced table inside a scope}
   */
  public FenceOptions.PlainSql getPlainSql() {
    return plainSql;
  }

  /**
   * @param plainSql what happens to plain SQL (JdbcTemplate, JPA/Hibernate, Spring Data) that may
   *     write a fenced table inside a scope
   */
  public void setPlainSql(FenceOptions.PlainSql plainSql) {
    this.plainSql = java.util.Objects.requireNonNull(plainSql, "fencing.plain-sql");
  }

  /**
   * @param triggerMode whether fenced connections carry the lease as settings for the enforcement
   *     trigger
   */
  public void setTriggerMode(Boolean triggerMode) {
    this.triggerMode = triggerMode;
  }

  /** {@return the prefix of every Redis key of the lease manager} */
  public String getKeyPrefix() {
    return keyPrefix;
  }

  /**
   * @param keyPrefix the prefix of every Redis key of the lease manager
   */
  public void setKeyPrefix(String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  /** {@return the bound of one call to Redis (an acquire attempt, a renewal, a release)} */
  public Duration getOperationTimeout() {
    return operationTimeout;
  }

  /**
   * @param operationTimeout the bound of one call to Redis (an acquire attempt, a renewal, a
   *     release)
   */
  public void setOperationTimeout(Duration operationTimeout) {
    this.operationTimeout = operationTimeout;
  }

  /** {@return the lock timeout of one registration attempt in the fence} */
  public Duration getRegistrationLockTimeout() {
    return registrationLockTimeout;
  }

  /**
   * @param registrationLockTimeout the lock timeout of one registration attempt in the fence
   */
  public void setRegistrationLockTimeout(Duration registrationLockTimeout) {
    this.registrationLockTimeout = registrationLockTimeout;
  }

  /** {@return how long registering a lease in the fence may take in total} */
  public Duration getRegistrationTimeout() {
    return registrationTimeout;
  }

  /**
   * @param registrationTimeout how long registering a lease in the fence may take in total
   */
  public void setRegistrationTimeout(Duration registrationTimeout) {
    this.registrationTimeout = registrationTimeout;
  }

  /**
   * {@return whether a registration that waited one lease time for the fence row ends the sessions
   * that still lock it for an older registration}
   */
  public boolean isEndStaleBlockers() {
    return endStaleBlockers;
  }

  /**
   * @param endStaleBlockers whether a registration that waited one lease time for the fence row
   *     ends the sessions that still lock it for an older registration
   */
  public void setEndStaleBlockers(boolean endStaleBlockers) {
    this.endStaleBlockers = endStaleBlockers;
  }

  /** {@return what happens to a write on a fenced table outside any fencing scope} */
  public UnscopedWrites getUnscopedWrites() {
    return unscopedWrites;
  }

  /**
   * Sets {@code fencing.unscoped-writes}.
   *
   * @param unscopedWrites what happens to a write on a fenced table outside any fencing scope
   */
  public void setUnscopedWrites(UnscopedWrites unscopedWrites) {
    this.unscopedWrites =
        java.util.Objects.requireNonNull(unscopedWrites, "fencing.unscoped-writes");
  }

  /** {@return the {@code fencing.migrations.*} properties} */
  public Migrations getMigrations() {
    return migrations;
  }

  /** {@return the {@code fencing.metrics.*} properties} */
  public Metrics getMetrics() {
    return metrics;
  }

  /** {@return the {@code fencing.shedlock.*} properties} */
  public ShedLock getShedlock() {
    return shedlock;
  }

  /** {@return the {@code fencing.test.*} properties} */
  public Test getTest() {
    return test;
  }
}
