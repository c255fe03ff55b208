package dev.fencing.it;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.ResourceFence;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.postgresql.ds.PGSimpleDataSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The nemesis's own lease client for the {@code CUT_IN_TRANSACTION} fault: it deletes a holder's
 * Redis lock (as a fail-over that lost the key would) and at once acquires the resource with the
 * next token and registers it, through the library like a worker ({@link FencedLeaseManager}; with
 * fencing off, the acquisition logged as the registration). It talks to the primary directly, not
 * through the proxy, so a proxy stall cannot delay the cut; its database sessions carry {@link
 * #APP_SUFFIX}, which the held worker looks for among the sessions its transaction blocks.
 */
final class Successor implements AutoCloseable {

  /** Appended to the run's application-name prefix: the successor's database sessions. */
  static final String APP_SUFFIX = "-successor";

  private final RedissonClient redisson;
  private final LeaseManager leases;
  private final PGSimpleDataSource db;
  private final String prefix;
  private final String schema;
  private final boolean fenced;
  private final long leaseMs;

  private Successor(
      RedissonClient redisson,
      LeaseManager leases,
      PGSimpleDataSource db,
      String prefix,
      String schema,
      boolean fenced,
      long leaseMs) {
    this.redisson = redisson;
    this.leases = leases;
    this.db = db;
    this.prefix = prefix;
    this.schema = schema;
    this.fenced = fenced;
    this.leaseMs = leaseMs;
  }

  /** Connects to the Redis server on {@code redisPort} and the run's database. */
  static Successor connect(
      int redisPort,
      String prefix,
      String mode,
      String schema,
      String fenceSchema,
      String appName,
      long leaseMs) {
    Config config = new Config();
    config
        .useSingleServer()
        .setAddress("redis://127.0.0.1:" + redisPort)
        .setTimeout(2000)
        .setConnectTimeout(2000)
        .setRetryAttempts(1)
        .setConnectionMinimumIdleSize(1)
        .setConnectionPoolSize(2)
        .setSubscriptionConnectionMinimumIdleSize(1)
        .setSubscriptionConnectionPoolSize(1);
    RedissonClient redisson = Redisson.create(config);
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setURL(ChaosRun.JDBC);
    db.setApplicationName(appName);
    boolean fenced = !mode.equals("off");
    LeaseManager redisLeases =
        RedisLeaseManager.create(
            redisson,
            LeaseOptions.defaults()
                .withKeyPrefix(prefix)
                .withOperationTimeout(Duration.ofSeconds(2)));
    LeaseManager leases =
        fenced
            ? new FencedLeaseManager(
                redisLeases,
                new ResourceFence(
                    db,
                    FenceOptions.defaults()
                        .withSchema(fenceSchema)
                        .withTriggerMode(mode.equals("trigger"))))
            : redisLeases;
    return new Successor(redisson, leases, db, prefix, schema, fenced, leaseMs);
  }

  /** Deletes the resource's lock key: its holder's lease is gone from Redis. */
  void deleteLock(String resource) {
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
  }

  /**
   * Acquires the resource, registers (fencing off: logs the acquisition as the registration), and
   * releases; returns the token.
   */
  long takeOver(String resource) throws SQLException {
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofMillis(leaseMs)).withMaxWait(Duration.ofSeconds(2));
    try (Lease lease = leases.acquire(resource, request)) {
      if (!fenced) {
        try (Connection c = db.getConnection();
            PreparedStatement insert =
                c.prepareStatement(
                    "INSERT INTO "
                        + schema
                        + ".registrations (resource, token, lease_id) VALUES (?, ?, ?)")) {
          insert.setString(1, resource);
          insert.setLong(2, lease.token().value());
          insert.setString(3, lease.leaseId());
          insert.executeUpdate();
        }
      }
      return lease.token().value();
    }
  }

  @Override
  public void close() {
    leases.close();
    Thread shutdown =
        new Thread(() -> redisson.shutdown(0, 2, TimeUnit.SECONDS), "successor-redisson-shutdown");
    shutdown.setDaemon(true);
    shutdown.start();
  }
}
