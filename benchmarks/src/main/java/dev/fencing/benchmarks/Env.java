package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The servers and what the benchmarks create on them: a table schema and a fence schema with a
 * random suffix (dropped in {@link #close()}), a Redis key prefix (keys deleted in {@link
 * #close()}), one HikariCP pool and one Redisson client.
 */
final class Env implements AutoCloseable {

  /** Rows in each benchmark table. */
  static final int ROWS = 10_000;

  final String jdbcUrl;
  final String redisUrl;
  final String schema;
  final String fenceSchema;
  final String prefix;
  final HikariDataSource pool;
  final FencedDataSource db;
  final FencedDataSource triggerDb;
  final FenceOptions fenceOptions;
  final RedissonClient redisson;

  Env(String jdbcUrl, String redisUrl, int poolSize) throws SQLException {
    this.jdbcUrl = jdbcUrl;
    this.redisUrl = redisUrl;
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("bench_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("benchf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "bench-" + suffix + ":";
    exec(
        "CREATE SCHEMA " + schema,
        // plain and guarded one-row updates, and the billing batch
        table("accounts"),
        // the same table with the enforcement trigger (strict)
        table("accounts_trig"),
        // the same with a minimal PL/pgSQL row trigger: the floor of any trigger design
        table("accounts_min_trig"),
        "ALTER TABLE "
            + schema
            + ".accounts_min_trig ADD COLUMN fence_token bigint NOT NULL DEFAULT 0",
        "CREATE FUNCTION "
            + schema
            + ".stamp_constant() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN NEW.fence_token := 1; RETURN NEW; END $$",
        "CREATE TRIGGER stamp BEFORE UPDATE ON "
            + schema
            + ".accounts_min_trig FOR EACH ROW EXECUTE FUNCTION "
            + schema
            + ".stamp_constant()");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(poolSize);
    config.setMinimumIdle(poolSize);
    config.setPoolName("fencing-bench-" + suffix);
    pool = new HikariDataSource(config);
    FencingMigrations.migrate(
        pool,
        MigrationOptions.builder()
            .schema(fenceSchema)
            .fence(schema + ".accounts")
            .enforce(schema + ".accounts_trig", EnforcementMode.STRICT)
            .build());
    exec(
        "VACUUM ANALYZE " + schema + ".accounts",
        "VACUUM ANALYZE " + schema + ".accounts_trig",
        "VACUUM ANALYZE " + schema + ".accounts_min_trig");
    fenceOptions = FenceOptions.defaults().withSchema(fenceSchema);
    db = FencedDataSource.wrap(pool, fenceOptions);
    triggerDb = FencedDataSource.wrap(pool, fenceOptions.withTriggerMode(true));
    Config redisConfig = new Config();
    redisConfig.useSingleServer().setAddress(redisUrl);
    redisson = Redisson.create(redisConfig);
  }

  private String table(String name) {
    return "CREATE TABLE "
        + schema
        + "."
        + name
        + " (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL);"
        + " INSERT INTO "
        + schema
        + "."
        + name
        + " SELECT g, 'owner-' || g, 0 FROM generate_series(1, "
        + ROWS
        + ") g";
  }

  String qualified(String table) {
    return schema + "." + table;
  }

  void exec(String... sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(jdbcUrl);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  @Override
  public void close() throws SQLException {
    try {
      redisson.getKeys().deleteByPattern(prefix + "*");
      // RFencedLock keeps its token counter outside the lock's name
      redisson.getKeys().deleteByPattern("redisson_lock_token:{" + prefix + "*");
    } finally {
      redisson.shutdown();
      pool.close();
      exec(
          "DROP SCHEMA IF EXISTS " + schema + " CASCADE",
          "DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
    }
  }
}
