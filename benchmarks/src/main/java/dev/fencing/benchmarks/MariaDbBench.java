package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The same ratios on MariaDB (InnoDB) as on PostgreSQL: fenced / plain for a one-row update in
 * auto-commit, in an explicit transaction, and a transaction of 1,000 batched updates. One pool,
 * one registered lease shared by the threads, its own database (dropped at the end).
 */
final class MariaDbBench implements AutoCloseable {

  static final String PLAIN = "plain UPDATE";
  static final String GUARDED = "GuardedStatements.update (row guard + fence)";
  static final String RAW = "the same guarded SQL, pool connection (no wrapper)";
  static final String BATCH_PLAIN = "plain batch";
  static final String BATCH_GUARDED = "guarded batch";
  static final String BATCH_RAW =
      "the same guarded SQL, pool connection (no wrapper), text protocol (the wrapper's form before"
          + " it server-prepared its batch)";
  static final String BATCH_RAW_SERVER_PREPARED =
      "the same guarded SQL, pool connection (no wrapper), server-prepared as the wrapper sends it";
  static final String BATCH_PLAIN_SERVER_PREPARED =
      "plain batch, server-prepared (useServerPrepStmts=true in the URL)";
  static final String BATCH_PLAIN_BULK =
      "plain batch, bulk protocol (useServerPrepStmts=true&useBulkStmts=true: no per-row counts)";
  static final String BATCH_GUARDED_BULK =
      "the same guarded SQL, bulk protocol (no per-row counts: a refused row is not reported)";
  static final String BATCH_TRX_ID =
      "locking verify once, then the transaction id from information_schema.INNODB_TRX per row";
  static final String BATCH_NO_LOCK =
      "that SQL without LOCK IN SHARE MODE in its fence lookup (unsafe: bound of a lookup per row)";
  static final String BATCH_ROW_GUARD = "row guard + stamp only, no fence lookup (hand-written)";
  static final String BATCH_SESSION_MARKER =
      "locking verify once, then a user-variable marker per row (unsafe: outlives the transaction)";
  private static final int ROWS = 10_000;
  private static final int BATCH_ROWS = 1_000;

  private final String url;
  private final String database;
  private final String fenceDb;
  private final String prefix;
  private final HikariDataSource pool;
  private final HikariDataSource serverPrepared;
  private final HikariDataSource bulk;
  private final FencedDataSource db;
  private final RedissonClient redisson;
  private final RedisLeaseManager leases;
  private final Lease lease;
  private final String accounts;

  MariaDbBench(String url, String redisUrl) throws SQLException {
    this.url = url;
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    database = ("benchm_" + suffix).toLowerCase(Locale.ROOT);
    fenceDb = ("benchmf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "benchm-" + suffix + ":";
    accounts = database + ".accounts";
    exec(
        "CREATE DATABASE " + database,
        "CREATE TABLE "
            + accounts
            + " (id BIGINT PRIMARY KEY, owner VARCHAR(64) NOT NULL, balance BIGINT NOT NULL)"
            + " ENGINE=InnoDB",
        "INSERT INTO " + accounts + " SELECT seq, CONCAT('owner-', seq), 0 FROM seq_1_to_" + ROWS);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(8);
    config.setMinimumIdle(8);
    config.setPoolName("fencing-bench-mariadb-" + suffix);
    pool = new HikariDataSource(config);
    serverPrepared = onePool(url, "useServerPrepStmts=true", "sp-" + suffix);
    bulk = onePool(url, "useServerPrepStmts=true&useBulkStmts=true", "bulk-" + suffix);
    FencingMigrations.migrate(
        pool, MigrationOptions.builder().schema(fenceDb).fence(accounts).build());
    db = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceDb));
    Config redisConfig = new Config();
    redisConfig.useSingleServer().setAddress(redisUrl);
    redisson = Redisson.create(redisConfig);
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
    lease =
        new FencedLeaseManager(leases, db.fence())
            .acquire(
                "bench-mariadb",
                LeaseRequest.forLeaseTime(Duration.ofSeconds(60))
                    .withMaxWait(Duration.ofSeconds(10)));
  }

  /** A one-connection pool of {@code url} with the driver options {@code options} added. */
  private static HikariDataSource onePool(String url, String options, String name) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + options);
    config.setMaximumPoolSize(1);
    config.setPoolName("fencing-bench-mariadb-" + name);
    return new HikariDataSource(config);
  }

  /**
   * Acquire + register + release against its floor: the registration's upsert written by hand,
   * committed in auto-commit.
   */
  Harness.GroupResult registration(Harness.Timing timing) throws Exception {
    String newer = "token < VALUES(token)";
    String upsert =
        "INSERT INTO "
            + fenceDb
            + ".fence (resource, token, lease_id) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE"
            + " lease_id = IF("
            + newer
            + ", VALUES(lease_id), lease_id), registered_at = IF("
            + newer
            + ", CURRENT_TIMESTAMP(6), registered_at), token = IF("
            + newer
            + ", VALUES(token), token)";
    return RegistrationBench.run("MariaDB", redisson, prefix, pool, db.fence(), upsert, 1, timing);
  }

  /** One-row updates, auto-commit or in an explicit transaction: plain, then guarded. */
  Harness.GroupResult writes(int threads, boolean explicit, Harness.Timing timing)
      throws Exception {
    String plainSql = "UPDATE " + accounts + " SET balance = ? WHERE id = ?";
    String rawSql =
        dev.fencing.jdbc.internal.FenceDialect.forProduct("MariaDB", fenceDb)
            .bind(lease)
            .update(accounts, "balance = ?", "id = ?")
            .sql();
    List<Harness.Variant> variants =
        List.of(
            new Harness.Variant(
                RAW,
                thread -> {
                  long[] next = {thread * 1_000L};
                  return () -> {
                    try (Connection c = pool.getConnection()) {
                      c.setAutoCommit(!explicit);
                      try (PreparedStatement s = c.prepareStatement(rawSql)) {
                        s.setLong(1, next[0]);
                        s.setLong(2, 1 + next[0]++ % ROWS);
                        expect(s.executeUpdate(), 1);
                      }
                      if (explicit) {
                        c.commit();
                      }
                    }
                  };
                }),
            new Harness.Variant(
                PLAIN,
                thread -> {
                  long[] next = {thread * 1_000L};
                  return () -> {
                    try (Connection c = pool.getConnection()) {
                      c.setAutoCommit(!explicit);
                      try (PreparedStatement s = c.prepareStatement(plainSql)) {
                        s.setLong(1, next[0]);
                        s.setLong(2, 1 + next[0]++ % ROWS);
                        expect(s.executeUpdate(), 1);
                      }
                      if (explicit) {
                        c.commit();
                      }
                    }
                  };
                }),
            new Harness.Variant(
                GUARDED,
                thread -> {
                  long[] next = {thread * 1_000L};
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = db.getConnection()) {
                              c.setAutoCommit(!explicit);
                              try (PreparedStatement s =
                                  GuardedStatements.update(c, accounts, "balance = ?", "id = ?")) {
                                s.setLong(1, next[0]);
                                s.setLong(2, 1 + next[0]++ % ROWS);
                                expect(s.executeUpdate(), 1);
                              }
                              if (explicit) {
                                c.commit();
                              }
                            }
                          });
                }));
    return Harness.run(
        "MariaDB one-row update, " + (explicit ? "BEGIN..COMMIT" : "auto-commit"),
        threads,
        timing,
        variants);
  }

  /**
   * Transactions of 1,000 batched one-row updates: plain, guarded, and diagnostics on pool
   * connections: the guarded SQL in the text protocol (the pool's default, and the wrapper's before
   * it server-prepared its batches), server-prepared as the wrapper sends it, in the bulk protocol,
   * without its fence lookup's row lock, without the lookup at all; the plain batch server-prepared
   * and in the bulk protocol (the URL options a user may set); and two marker designs (a locking
   * verify once per transaction that sets a session user variable, which each row compares): a
   * constant marker, which MariaDB cannot make safe (the variable outlives the transaction and
   * nothing on the server ties it to one), and the transaction's id from {@code INNODB_TRX}, read
   * per row.
   */
  Harness.GroupResult batch(Harness.Timing timing) throws Exception {
    String plainSql = "UPDATE " + accounts + " SET balance = balance + ? WHERE id = ?";
    dev.fencing.jdbc.internal.FenceGuards guards =
        dev.fencing.jdbc.internal.FenceDialect.forProduct("MariaDB", fenceDb).bind(lease);
    String guardedSql = guards.update(accounts, "balance = balance + ?", "id = ?").sql();
    String fenceHeld = " AND " + guards.fenceHeld();
    String marker = UUID.randomUUID().toString().replace("-", "");
    String verifySetsMarker =
        guards.verify().replaceFirst("^SELECT 1 ", "SELECT @fencing_verified := '" + marker + "' ");
    List<Harness.Variant> variants = new ArrayList<>();
    variants.add(
        new Harness.Variant(
            BATCH_PLAIN,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(plainSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_GUARDED,
            thread -> {
              long[] block = {0};
              return () ->
                  Fencing.run(
                      lease,
                      () -> {
                        try (Connection c = db.getConnection()) {
                          c.setAutoCommit(false);
                          try (PreparedStatement s =
                              GuardedStatements.update(
                                  c, accounts, "balance = balance + ?", "id = ?")) {
                            fill(s, block[0]++);
                            s.executeBatch();
                          }
                          c.commit();
                        }
                      });
            }));
    variants.add(
        new Harness.Variant(
            BATCH_RAW,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(guardedSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_RAW_SERVER_PREPARED,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(serverPrepared, guardedSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_PLAIN_SERVER_PREPARED,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(serverPrepared, plainSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_PLAIN_BULK,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(bulk, plainSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_GUARDED_BULK,
            thread -> {
              long[] block = {0};
              return () -> poolBatch(bulk, guardedSql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_NO_LOCK,
            thread -> {
              long[] block = {0};
              String sql = guardedSql.replace(" LOCK IN SHARE MODE", "");
              return () -> poolBatch(sql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_ROW_GUARD,
            thread -> {
              long[] block = {0};
              String sql = guardedSql.replace(fenceHeld, "");
              return () -> poolBatch(sql, null, block[0]++);
            }));
    variants.add(
        new Harness.Variant(
            BATCH_SESSION_MARKER,
            thread -> {
              long[] block = {0};
              String sql =
                  guardedSql.replace(fenceHeld, " AND @fencing_verified = '" + marker + "'");
              return () -> poolBatch(sql, verifySetsMarker, block[0]++);
            }));
    String trxId =
        "(SELECT trx_id FROM information_schema.INNODB_TRX"
            + " WHERE trx_mysql_thread_id = CONNECTION_ID())";
    String verifySetsTrxId =
        "SELECT @fencing_verified := " + trxId + " FROM (" + guards.verify() + ") verified";
    variants.add(
        new Harness.Variant(
            BATCH_TRX_ID,
            thread -> {
              long[] block = {0};
              String sql = guardedSql.replace(fenceHeld, " AND @fencing_verified = " + trxId);
              return () -> poolBatch(sql, verifySetsTrxId, block[0]++);
            }));
    return Harness.run("MariaDB billing batch, 1,000 rows/tx", 1, timing, variants);
  }

  /** One transaction on a pool connection: {@code first} (if any), then the batch, commit. */
  private void poolBatch(String sql, String first, long block) throws SQLException {
    poolBatch(pool, sql, first, block);
  }

  /** The same on a connection of {@code source}. */
  private static void poolBatch(HikariDataSource source, String sql, String first, long block)
      throws SQLException {
    try (Connection c = source.getConnection()) {
      c.setAutoCommit(false);
      if (first != null) {
        try (Statement s = c.createStatement();
            java.sql.ResultSet row = s.executeQuery(first)) {
          if (!row.next()) {
            throw new IllegalStateException("the verify found no registration");
          }
        }
      }
      try (PreparedStatement s = c.prepareStatement(sql)) {
        fill(s, block);
        int[] counts = s.executeBatch();
        if (counts.length != BATCH_ROWS) {
          throw new IllegalStateException("batch ran " + counts.length + " rows");
        }
      }
      c.commit();
    }
  }

  private static void fill(PreparedStatement s, long block) throws SQLException {
    long first = (block * BATCH_ROWS) % ROWS;
    for (int i = 0; i < BATCH_ROWS; i++) {
      s.setLong(1, 1);
      s.setLong(2, 1 + (first + i) % ROWS);
      s.addBatch();
    }
  }

  private static void expect(int rows, int expected) {
    if (rows != expected) {
      throw new IllegalStateException("expected " + expected + " row(s), got " + rows);
    }
  }

  private void exec(String... sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }

  @Override
  public void close() throws SQLException {
    try {
      lease.close();
      leases.close();
      redisson.getKeys().deleteByPattern(prefix + "*");
    } finally {
      redisson.shutdown();
      pool.close();
      serverPrepared.close();
      bulk.close();
      exec("DROP DATABASE IF EXISTS " + database, "DROP DATABASE IF EXISTS " + fenceDb);
    }
  }
}
