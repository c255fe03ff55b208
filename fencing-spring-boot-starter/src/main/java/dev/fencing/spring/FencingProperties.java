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

    public boolean isInMemoryLeases() {
      return inMemoryLeases;
    }

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

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public boolean isTagResource() {
      return tagResource;
    }

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

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getResourcePrefix() {
      return resourcePrefix;
    }

    public void setResourcePrefix(String resourcePrefix) {
      this.resourcePrefix = resourcePrefix;
    }

    public boolean isKeepAlive() {
      return keepAlive;
    }

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

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public List<String> getTables() {
      return tables;
    }

    public void setTables(List<String> tables) {
      this.tables = tables;
    }

    public List<String> getEnforce() {
      return enforce;
    }

    public void setEnforce(List<String> enforce) {
      this.enforce = enforce;
    }

    public EnforcementMode getEnforcementMode() {
      return enforcementMode;
    }

    public void setEnforcementMode(EnforcementMode enforcementMode) {
      this.enforcementMode = enforcementMode;
    }
  }

  /** Returns the fence options these properties describe. */
  public FenceOptions toFenceOptions() {
    return new FenceOptions(
            schema,
            registrationLockTimeout,
            registrationTimeout,
            effectiveTriggerMode(),
            endStaleBlockers)
        .withPlainSql(plainSql);
  }

  /** Returns the lease manager options these properties describe. */
  public LeaseOptions toLeaseOptions() {
    return new LeaseOptions(operationTimeout, keyPrefix);
  }

  /** Returns the trigger mode: as set, or on when some table is enforced. */
  public boolean effectiveTriggerMode() {
    return triggerMode != null ? triggerMode : !migrations.getEnforce().isEmpty();
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public boolean isLockOnly() {
    return lockOnly;
  }

  public void setLockOnly(boolean lockOnly) {
    this.lockOnly = lockOnly;
  }

  public String getSchema() {
    return schema;
  }

  public void setSchema(String schema) {
    this.schema = schema;
  }

  public Boolean getTriggerMode() {
    return triggerMode;
  }

  public FenceOptions.PlainSql getPlainSql() {
    return plainSql;
  }

  public void setPlainSql(FenceOptions.PlainSql plainSql) {
    this.plainSql = java.util.Objects.requireNonNull(plainSql, "fencing.plain-sql");
  }

  public void setTriggerMode(Boolean triggerMode) {
    this.triggerMode = triggerMode;
  }

  public String getKeyPrefix() {
    return keyPrefix;
  }

  public void setKeyPrefix(String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  public Duration getOperationTimeout() {
    return operationTimeout;
  }

  public void setOperationTimeout(Duration operationTimeout) {
    this.operationTimeout = operationTimeout;
  }

  public Duration getRegistrationLockTimeout() {
    return registrationLockTimeout;
  }

  public void setRegistrationLockTimeout(Duration registrationLockTimeout) {
    this.registrationLockTimeout = registrationLockTimeout;
  }

  public Duration getRegistrationTimeout() {
    return registrationTimeout;
  }

  public void setRegistrationTimeout(Duration registrationTimeout) {
    this.registrationTimeout = registrationTimeout;
  }

  public boolean isEndStaleBlockers() {
    return endStaleBlockers;
  }

  public void setEndStaleBlockers(boolean endStaleBlockers) {
    this.endStaleBlockers = endStaleBlockers;
  }

  public UnscopedWrites getUnscopedWrites() {
    return unscopedWrites;
  }

  public void setUnscopedWrites(UnscopedWrites unscopedWrites) {
    this.unscopedWrites =
        java.util.Objects.requireNonNull(unscopedWrites, "fencing.unscoped-writes");
  }

  public Migrations getMigrations() {
    return migrations;
  }

  public Metrics getMetrics() {
    return metrics;
  }

  public ShedLock getShedlock() {
    return shedlock;
  }

  public Test getTest() {
    return test;
  }
}
