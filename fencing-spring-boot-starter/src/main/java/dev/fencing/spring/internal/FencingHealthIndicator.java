package dev.fencing.spring.internal;

import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The {@code fencing} health: the Redis backend answers, and the fence schema holds the contract
 * version this library needs ({@link FenceSchema#CONTRACT_VERSION}) or a newer one. Down, with the
 * reason, otherwise.
 */
public final class FencingHealthIndicator extends AbstractHealthIndicator {

  private final RedissonClient redisson;
  private final String keyPrefix;
  private final DataSource dataSource;
  private final String schema;

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
    super("fencing health check failed");
    this.redisson = redisson;
    this.keyPrefix = keyPrefix;
    this.dataSource = dataSource;
    this.schema = schema;
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
    if (up) {
      builder.up();
    } else {
      builder.down();
    }
  }
}
