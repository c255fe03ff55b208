package dev.fencing.spring.internal;

import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code fencing} health: the Redis backend answers, the fence schema holds the contract
 * version this library needs ({@link FenceSchema#CONTRACT_VERSION}) or a newer one, and no
 * registration of this instance has been waiting for the fence row longer than one registration
 * lock timeout (a registration normally takes milliseconds; one that waits is behind a session that
 * holds the row: a previous holder's transaction left open, or frozen). Down, with the reason,
 * otherwise; a stuck registration is shown with the sessions that hold the fence table in an open
 * transaction (PostgreSQL).
 */
public final class FencingHealthIndicator extends AbstractHealthIndicator {

  private final RedissonClient redisson;
  private final String keyPrefix;
  private final DataSource dataSource;
  private final String schema;
  private final RegistrationWatch registrations;
  private final Duration stuckAfter;

  /** Sessions that hold a lock on the fence table inside a transaction, oldest first. */
  private static final String FENCE_HOLDERS =
      "SELECT a.pid, a.state, a.application_name, host(a.client_addr),"
          + " floor(extract(epoch FROM now() - a.xact_start) * 1000)::bigint,"
          + " floor(extract(epoch FROM now() - a.state_change) * 1000)::bigint,"
          + " left(a.query, 200)"
          + " FROM pg_catalog.pg_stat_activity a"
          + " WHERE a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL"
          + " AND a.pid IN (SELECT l.pid FROM pg_catalog.pg_locks l WHERE l.granted"
          + " AND l.relation = to_regclass(quote_ident(?) || '.fence'))"
          + " ORDER BY a.xact_start LIMIT 10";

  /**
   * Creates the indicator.
   *
   * @param redisson the client the leases are taken on, or null when the application brings its own
   *     lease manager (Redis is then not checked)
   * @param keyPrefix the lease keys' prefix
   * @param dataSource the application's data source
   * @param schema the fence schema
   */
  public FencingHealthIndicator(
      RedissonClient redisson, String keyPrefix, DataSource dataSource, String schema) {
    this(redisson, keyPrefix, dataSource, schema, null, Duration.ZERO);
  }

  /**
   * Creates the indicator.
   *
   * @param redisson the client the leases are taken on, or null when the application brings its own
   *     lease manager (Redis is then not checked)
   * @param keyPrefix the lease keys' prefix
   * @param dataSource the application's data source
   * @param schema the fence schema
   * @param registrations this instance's registrations under way, or null (not checked)
   * @param stuckAfter how long a registration may wait before it counts as stuck
   */
  public FencingHealthIndicator(
      RedissonClient redisson,
      String keyPrefix,
      DataSource dataSource,
      String schema,
      RegistrationWatch registrations,
      Duration stuckAfter) {
    super("fencing health check failed");
    this.redisson = redisson;
    this.keyPrefix = keyPrefix;
    this.dataSource = dataSource;
    this.schema = schema;
    this.registrations = registrations;
    this.stuckAfter = stuckAfter;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    boolean up = true;
    if (redisson == null) {
      builder.withDetail("redis", "not checked: the application's own lease manager");
    } else {
      try {
        redisson.getBucket(keyPrefix + "health", StringCodec.INSTANCE).isExists();
        builder.withDetail("redis", "reachable");
      } catch (RuntimeException e) {
        up = false;
        builder.withDetail("redis", "unreachable: " + e.getMessage());
      }
    }
    builder.withDetail("fenceSchema", schema);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(FenceSchema.contractQuery(schema))) {
      rs.next();
      int version = rs.getInt(1);
      builder.withDetail("contractVersion", version);
      if (version < FenceSchema.CONTRACT_VERSION) {
        up = false;
        builder.withDetail(
            "contract",
            "version " + FenceSchema.CONTRACT_VERSION + " needed: run the fence migrations");
      }
    } catch (SQLException e) {
      up = false;
      builder.withDetail(
          "contract",
          "not readable (SQLState "
              + e.getSQLState()
              + "): run the fence migrations into schema "
              + schema
              + " (fencing.migrations.enabled) or set fencing.schema; "
              + e.getMessage());
    }
    if (registrations != null && !registrationsMoving(builder)) {
      up = false;
    }
    if (up) {
      builder.up();
    } else {
      builder.down();
    }
  }

  /** Shows the registrations under way; false if one has waited longer than the bound. */
  private boolean registrationsMoving(Health.Builder builder) {
    List<RegistrationWatch.Pending> pending = registrations.pending();
    List<Map<String, Object>> stuck = new ArrayList<>();
    for (RegistrationWatch.Pending p : pending) {
      if (p.waiting().compareTo(stuckAfter) > 0) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("resource", p.resource());
        one.put("token", p.token());
        one.put("waitingMillis", p.waiting().toMillis());
        stuck.add(one);
      }
    }
    if (stuck.isEmpty()) {
      builder.withDetail("registrations", pending.isEmpty() ? "none under way" : "moving");
      return true;
    }
    builder.withDetail(
        "registrations",
        "stuck: waiting for the fence row longer than "
            + stuckAfter.toMillis()
            + " ms, behind a session that holds it (a previous holder's transaction left open, or"
            + " frozen); the registration ends such sessions after its bound"
            + " (fencing.end-stale-blockers), or gives up at fencing.registration-timeout");
    builder.withDetail("stuckRegistrations", stuck);
    builder.withDetail("fenceHolders", fenceHolders());
    return false;
  }

  /** The sessions holding the fence table in an open transaction, or why they could not be read. */
  private Object fenceHolders() {
    try (Connection c = dataSource.getConnection()) {
      if (!c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgres")) {
        return "not read: PostgreSQL only";
      }
      List<Map<String, Object>> holders = new ArrayList<>();
      try (PreparedStatement s = c.prepareStatement(FENCE_HOLDERS)) {
        s.setString(1, schema);
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("pid", rs.getInt(1));
            one.put("state", rs.getString(2));
            one.put("applicationName", rs.getString(3));
            one.put("clientAddress", rs.getString(4));
            one.put("transactionOpenMillis", rs.getLong(5));
            one.put("inStateMillis", rs.getLong(6));
            one.put("query", rs.getString(7));
            holders.add(one);
          }
        }
      }
      return holders;
    } catch (SQLException e) {
      return "not read (SQLState " + e.getSQLState() + "): " + e.getMessage();
    }
  }
}
