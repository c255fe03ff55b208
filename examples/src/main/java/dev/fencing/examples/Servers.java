package dev.fencing.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The database (PostgreSQL or MariaDB) and Redis servers the example talks to: the ones named by
 * URL, or embedded ones started on free ports when no URL is given. Closing stops what was started.
 */
public final class Servers implements AutoCloseable {

  private final String jdbcUrl;
  private final String redisUrl;
  private final List<AutoCloseable> started;

  private Servers(String jdbcUrl, String redisUrl, List<AutoCloseable> started) {
    this.jdbcUrl = jdbcUrl;
    this.redisUrl = redisUrl;
    this.started = started;
  }

  /**
   * Uses the given servers (checking that they answer), or starts embedded ones for those that are
   * null.
   *
   * @param log where "starting embedded ..." lines go
   */
  public static Servers start(
      String jdbcUrl, String redisUrl, EmbeddedRedisServer.Source redisSource, Consumer<String> log)
      throws ServerException {
    return start(jdbcUrl, redisUrl, true, redisSource, log);
  }

  /**
   * As {@link #start(String, String, EmbeddedRedisServer.Source, Consumer)}; with {@code withRedis}
   * false, Redis is neither checked nor started and {@link #redisUrl} is null.
   */
  public static Servers start(
      String jdbcUrl,
      String redisUrl,
      boolean withRedis,
      EmbeddedRedisServer.Source redisSource,
      Consumer<String> log)
      throws ServerException {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      if (jdbcUrl == null) {
        log.accept("starting embedded PostgreSQL (no --jdbc-url / FENCING_JDBC_URL given) ...");
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start();
        started.add(pg);
        jdbcUrl = pg.jdbcUrl();
        log.accept("embedded PostgreSQL on port " + pg.port());
      } else {
        checkDatabase(jdbcUrl);
      }
      if (!withRedis) {
        redisUrl = null;
      } else if (redisUrl == null) {
        log.accept("starting embedded Redis (no --redis-url / FENCING_REDIS_URL given) ...");
        EmbeddedRedisServer redis = EmbeddedRedisServer.start(redisSource);
        started.add(redis);
        redisUrl = redis.url();
        log.accept("embedded Redis: " + redis.description());
      } else {
        checkRedis(redisUrl);
      }
      return new Servers(jdbcUrl, redisUrl, started);
    } catch (ServerException | RuntimeException e) {
      closeAll(started);
      throw e;
    }
  }

  /**
   * Fails with a one-line message unless the database (PostgreSQL or MariaDB, from the URL's
   * prefix) accepts a connection at {@code url}.
   */
  public static void checkDatabase(String url) throws ServerException {
    BillingDatabase database;
    try {
      database = BillingDatabase.ofUrl(url);
    } catch (IllegalArgumentException e) {
      throw new ServerException(
          "not a PostgreSQL or MariaDB JDBC URL: " + ServerException.redact(url), e);
    }
    Properties props = database.quickConnect();
    try (Connection c = DriverManager.getConnection(url, props)) {
      c.isValid(5);
    } catch (SQLException e) {
      throw new ServerException(
          "cannot reach "
              + database.label()
              + " at "
              + ServerException.redact(url)
              + ": "
              + ServerException.firstLine(e),
          e);
    }
  }

  /** Fails with a one-line message unless a Redis server answers PING at {@code url}. */
  public static void checkRedis(String url) throws ServerException {
    URI uri;
    try {
      uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new ServerException("not a Redis URL: " + ServerException.redact(url), e);
    }
    if (uri.getHost() == null || !(url.startsWith("redis://") || url.startsWith("rediss://"))) {
      throw new ServerException(
          "not a Redis URL (redis://host:port): " + ServerException.redact(url), null);
    }
    int port = uri.getPort() > 0 ? uri.getPort() : 6379;
    if (url.startsWith("redis://") && !EmbeddedRedisServer.ping(uri.getHost(), port, 3000)) {
      throw new ServerException(
          "cannot reach Redis at " + ServerException.redact(url) + ": no answer to PING", null);
    }
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  public String redisUrl() {
    return redisUrl;
  }

  /** A HikariCP pool on the database server. */
  public HikariDataSource newPool(String poolName, int maxSize) {
    return pool(jdbcUrl, poolName, maxSize);
  }

  /** A HikariCP pool on {@code jdbcUrl}. */
  public static HikariDataSource pool(String jdbcUrl, String poolName, int maxSize) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setPoolName(poolName);
    config.setMaximumPoolSize(maxSize);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(10_000);
    return new HikariDataSource(config);
  }

  /** A Redisson client on the Redis server. */
  public RedissonClient newRedisson() {
    return redisson(redisUrl);
  }

  /** A Redisson client on {@code redisUrl}. */
  public static RedissonClient redisson(String redisUrl) {
    Config config = new Config();
    config
        .useSingleServer()
        .setAddress(redisUrl)
        .setConnectionMinimumIdleSize(1)
        .setConnectionPoolSize(8)
        .setConnectTimeout(5_000)
        .setTimeout(5_000);
    return Redisson.create(config);
  }

  @Override
  public void close() {
    closeAll(started);
  }

  private static void closeAll(List<AutoCloseable> started) {
    List<AutoCloseable> reversed = new ArrayList<>(started);
    Collections.reverse(reversed);
    for (AutoCloseable c : reversed) {
      try {
        c.close();
      } catch (Exception e) {
        // best effort: the JVM's shutdown hooks stop what is left
      }
    }
    started.clear();
  }
}
