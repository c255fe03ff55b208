package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.migrations.MigrationReport;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * MariaDB (InnoDB) as the fenced database: registration, the row guard, the resource fence held
 * until the writer's transaction ends, the guarded update, delete, insert, upsert and batch, the
 * same {@link StaleTokenException}, and what is refused. Every stale write is also sent unguarded
 * through the plain pool (fencing off), which must then see the violation. Its own database per
 * class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbFencingTest {

  static final String ROOT_URL =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  private String database;
  private String fenceDb;
  private String prefix;
  private HikariDataSource pool;
  private FencedDataSource db;
  private RedissonClient redisson;
  private RedisLeaseManager leases;
  private int resources;

  @BeforeAll
  void setUp() throws SQLException {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    database = ("fjm_" + suffix).toLowerCase(Locale.ROOT);
    fenceDb = ("fjmf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "fjm-" + suffix + ":";
    exec(
        "CREATE DATABASE " + database,
        "CREATE TABLE "
            + database
            + ".accounts (id BIGINT PRIMARY KEY, owner VARCHAR(100) NOT NULL, balance BIGINT NOT"
            + " NULL) ENGINE=InnoDB",
        "CREATE TABLE "
            + database
            + ".charges (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer_id BIGINT NOT NULL UNIQUE,"
            + " amount BIGINT NOT NULL) ENGINE=InnoDB");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(ROOT_URL.replace("/test?", "/" + database + "?"));
    config.setMaximumPoolSize(6);
    pool = new HikariDataSource(config);
    MigrationReport report =
        FencingMigrations.migrate(
            pool,
            MigrationOptions.builder()
                .schema(fenceDb)
                .fence(database + ".accounts", "charges")
                .build());
    assertThat(report.columnsAdded()).hasSize(2);
    db = FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceDb));
    redisson = RedisServers.connectShared();
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
  }

  @AfterAll
  void tearDown() {
    if (leases != null) {
      leases.close();
      redisson.getKeys().deleteByPattern(prefix + "*");
      redisson.shutdown();
    }
    if (pool != null) {
      pool.close();
    }
    exec("DROP DATABASE IF EXISTS " + database, "DROP DATABASE IF EXISTS " + fenceDb);
  }

  private record Holders(Lease stale, Lease current) {}

  private Holders staleAndCurrent() {
    String resource = "mjob-" + ++resources;
    FencedLeaseManager fenced = new FencedLeaseManager(leases, db.fence());
    Lease first = fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
    Lease current = fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    return new Holders(StaleViews.believedHeld(first), current);
  }

  @Test
  void migrationsAreIdempotentAndTheContractIsChecked() throws SQLException {
    MigrationReport again =
        FencingMigrations.migrate(
            pool, MigrationOptions.builder().schema(fenceDb).fence(database + ".accounts").build());
    assertThat(again.changedNothing()).isTrue();
    assertThat(again.columnsAlreadyPresent()).containsExactly(database + ".accounts");
    FencedDataSource wrong =
        FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema("nope"));
    Lease lease =
        leases.acquire("contract-" + prefix, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    assertThatThrownBy(() -> wrong.fence().register(lease))
        .isInstanceOf(java.sql.SQLNonTransientException.class)
        .hasMessageContaining(fenceDb);
    lease.close();
  }

  @Test
  void enforcementTriggerAndTriggerModeAreRefused() throws SQLException {
    assertThatThrownBy(
            () ->
                FencingMigrations.migrate(
                    pool,
                    MigrationOptions.builder()
                        .schema(fenceDb)
                        .enforce(database + ".accounts", EnforcementMode.STRICT)
                        .build()))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("not offered on MariaDB");
    FencedDataSource trigger =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withSchema(fenceDb).withTriggerMode(true));
    Lease lease =
        leases.acquire("trigger-" + prefix, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    try {
      assertThatThrownBy(() -> Fencing.run(lease, () -> trigger.getConnection().close()))
          .isInstanceOf(SQLFeatureNotSupportedException.class)
          .hasMessageContaining("session user variables");
    } finally {
      lease.close();
    }
  }

  @Test
  void registrationIsStrictlyGreaterAndRecoversALostCounter() throws SQLException {
    String resource = "counter-" + ++resources;
    FencedLeaseManager fenced = new FencedLeaseManager(leases, db.fence());
    Lease first = fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    long token = first.token().value();
    assertThat(db.fence().currentToken(resource)).hasValue(token);
    first.close();
    // Redis lost its counter: the next token it hands out is one the fence has seen
    redisson.getBucket(prefix + "{" + resource + "}:token", StringCodec.INSTANCE).set("0");
    Lease second = fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    assertThat(second.token().value()).isGreaterThan(token);
    assertThat(db.fence().currentToken(resource)).hasValue(second.token().value());
    // the stale registration itself is refused with the figures
    Lease lower = StaleViews.believedHeld(first);
    assertThatThrownBy(() -> db.fence().register(lower))
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.attemptedToken()).isEqualTo(token);
              assertThat(e.currentToken()).isEqualTo(second.token().value());
            });
    // a retry of the same registration is not a refusal
    db.fence().register(second);
    second.close();
  }

  @Test
  void staleUpdateDeleteInsertAndUpsertAreRejectedAndTheControlSeesTheViolation()
      throws SQLException {
    exec(
        "INSERT INTO "
            + database
            + ".accounts (id, owner, balance) VALUES (1, 'a', 10), (2, 'b', 20)");
    Holders h = staleAndCurrent();
    Fencing.run(
        h.current(),
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement u =
                  GuardedStatements.update(c, database + ".accounts", "owner = ?", "id = ?")) {
            u.setString(1, "current");
            u.setLong(2, 1);
            assertThat(u.executeUpdate()).isEqualTo(1);
            u.setString(1, "current");
            u.setLong(2, 99);
            assertThat(u.executeUpdate()).isZero(); // no such row: not a rejection
          }
        });
    long current = h.current().token().value();
    Fencing.run(
        h.stale(),
        () -> {
          try (Connection c = db.getConnection()) {
            assertStale(
                h,
                () -> {
                  try (PreparedStatement u =
                      GuardedStatements.update(c, database + ".accounts", "owner = ?", "id = ?")) {
                    u.setString(1, "stale");
                    u.setLong(2, 1);
                    u.executeUpdate();
                  }
                });
            assertStale(
                h,
                () -> {
                  try (PreparedStatement d =
                      GuardedStatements.delete(c, database + ".accounts", "id = ?")) {
                    d.setLong(1, 2);
                    d.executeUpdate();
                  }
                });
            assertStale(
                h,
                () -> {
                  try (PreparedStatement i =
                      GuardedStatements.insert(
                          c, database + ".accounts", "id", "owner", "balance")) {
                    i.setLong(1, 3);
                    i.setString(2, "stale");
                    i.setLong(3, 0);
                    i.executeUpdate();
                  }
                });
            assertStale(
                h,
                () -> {
                  try (PreparedStatement up =
                      GuardedStatements.upsert(
                          c,
                          database + ".accounts",
                          List.of("id", "owner", "balance"),
                          List.of("id"))) {
                    up.setLong(1, 1);
                    up.setString(2, "stale");
                    up.setLong(3, 0);
                    up.executeUpdate();
                  }
                });
          }
        });
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 1"))
        .isEqualTo("current");
    assertThat(query("SELECT COUNT(*) FROM " + database + ".accounts WHERE id IN (2, 3)"))
        .isEqualTo("1");
    // fencing off: the same stale write, unguarded, overwrites the current holder's row
    try (Connection c = pool.getConnection();
        PreparedStatement u =
            c.prepareStatement(
                "UPDATE " + database + ".accounts SET owner = 'stale' WHERE id = 1")) {
      assertThat(u.executeUpdate()).isEqualTo(1);
    }
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 1"))
        .isEqualTo("stale");
    assertThat(current).isGreaterThan(h.stale().token().value());
  }

  @Test
  void upsertOfTheCurrentHolderInsertsThenUpdatesAndARowOfANewerHolderRefusesIt()
      throws SQLException {
    Holders h = staleAndCurrent();
    for (long amount : new long[] {5, 7}) {
      Fencing.run(
          h.current(),
          () -> {
            try (Connection c = db.getConnection();
                PreparedStatement up =
                    GuardedStatements.upsert(
                        c, "charges", List.of("customer_id", "amount"), List.of("customer_id"))) {
              up.setLong(1, 42);
              up.setLong(2, amount);
              assertThat(up.executeUpdate()).isPositive();
            }
          });
    }
    assertThat(query("SELECT amount FROM " + database + ".charges WHERE customer_id = 42"))
        .isEqualTo("7");
    assertThat(query("SELECT fence_token FROM " + database + ".charges WHERE customer_id = 42"))
        .isEqualTo(Long.toString(h.current().token().value()));
    // a row written by a newer token of the same resource: the duplicate is refused with ZF001,
    // not reported as 1 row (found rows) like an untouched duplicate would be
    long newer = h.current().token().value() + 5;
    exec("UPDATE " + database + ".charges SET fence_token = " + newer + " WHERE customer_id = 42");
    Fencing.run(
        h.current(),
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement up =
                  GuardedStatements.upsert(
                      c, "charges", List.of("customer_id", "amount"), List.of("customer_id"))) {
            up.setLong(1, 42);
            up.setLong(2, 9);
            assertThatThrownBy(up::executeUpdate)
                .isInstanceOfSatisfying(
                    StaleTokenException.class,
                    e -> {
                      assertThat(e.getSQLState()).isEqualTo("ZF001");
                      assertThat(e.resource()).isEqualTo(h.current().resource());
                      assertThat(e.attemptedToken()).isEqualTo(h.current().token().value());
                      assertThat(e.currentToken()).isEqualTo(newer);
                    });
          }
        });
    assertThat(query("SELECT amount FROM " + database + ".charges WHERE customer_id = 42"))
        .isEqualTo("7");
  }

  @Test
  void aGuardedWriteHoldsTheFenceRowUntilItsTransactionEnds() throws Exception {
    exec("INSERT INTO " + database + ".accounts (id, owner, balance) VALUES (10, 'x', 0)");
    String resource = "held-" + ++resources;
    FencedLeaseManager fenced = new FencedLeaseManager(leases, db.fence());
    Lease first = fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    CountDownLatch written = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> writer =
        CompletableFuture.runAsync(
            () -> {
              try {
                Fencing.run(
                    first,
                    () -> {
                      try (Connection c = db.getConnection()) {
                        // READ COMMITTED: the level at which a plain subquery would not lock
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        c.setAutoCommit(false);
                        try (PreparedStatement u =
                            GuardedStatements.update(
                                c, database + ".accounts", "owner = ?", "id = ?")) {
                          u.setString(1, "first");
                          u.setLong(2, 10);
                          assertThat(u.executeUpdate()).isEqualTo(1);
                        }
                        written.countDown();
                        release.await(10, TimeUnit.SECONDS);
                        c.commit();
                      }
                    });
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
    assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
    long started = System.nanoTime();
    CompletableFuture<Lease> successor =
        CompletableFuture.supplyAsync(
            () -> fenced.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30))));
    Thread.sleep(1_500);
    assertThat(successor).isNotDone(); // waits for the writer's transaction
    release.countDown();
    writer.get(10, TimeUnit.SECONDS);
    Lease second = successor.get(10, TimeUnit.SECONDS);
    assertThat(System.nanoTime() - started).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(1_500));
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 10"))
        .isEqualTo("first");
    second.close();
  }

  @Test
  void batchesInATransactionAndInAutoCommitCarryTheGuard() throws SQLException {
    Holders h = staleAndCurrent();
    exec(
        "INSERT INTO "
            + database
            + ".accounts (id, owner, balance) VALUES (20, 'a', 0), (21, 'a', 0), (22, 'a', 0)");
    for (boolean autoCommit : new boolean[] {true, false}) {
      Fencing.run(
          h.current(),
          () -> {
            try (Connection c = db.getConnection()) {
              c.setAutoCommit(autoCommit);
              try (PreparedStatement u =
                  GuardedStatements.update(
                      c, database + ".accounts", "balance = balance + 1", "id = ?")) {
                for (long id = 20; id <= 22; id++) {
                  u.setLong(1, id);
                  u.addBatch();
                }
                assertThat(u.executeBatch()).containsExactly(1, 1, 1);
              }
              if (!autoCommit) {
                c.commit();
              }
            }
          });
      Fencing.run(
          h.stale(),
          () -> {
            try (Connection c = db.getConnection()) {
              c.setAutoCommit(autoCommit);
              try (PreparedStatement u =
                  GuardedStatements.update(c, database + ".accounts", "balance = 100", "id = ?")) {
                for (long id = 20; id <= 22; id++) {
                  u.setLong(1, id);
                  u.addBatch();
                }
                assertThatThrownBy(u::executeBatch).isInstanceOf(SQLException.class);
              }
              if (!autoCommit) {
                c.rollback();
              }
            }
          });
    }
    assertThat(
            query("SELECT SUM(balance) FROM " + database + ".accounts WHERE id BETWEEN 20 AND 22"))
        .isEqualTo("6");
    // fencing off: the stale batch, unguarded, goes through
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.addBatch("UPDATE " + database + ".accounts SET balance = 100 WHERE id = 20");
      assertThat(s.executeBatch()).containsExactly(1);
    }
  }

  /**
   * The rows of a guarded batch inside a transaction go to the server as executions of one
   * server-side prepared statement (the binary protocol), though the pool's URL leaves Connector/J
   * on client-side (text) statements: the fence check's subquery is parsed once, not once per row.
   * The rows keep their own update counts (a row the row guard refused reports 0), and the stale
   * holder's batch is still refused by the database. Fails on the text protocol (no {@code
   * COM_STMT_EXECUTE} counted).
   */
  @Test
  void aGuardedBatchInATransactionIsServerPreparedWhateverTheUrl() throws SQLException {
    assertThat(ROOT_URL).doesNotContain("useServerPrepStmts");
    Holders h = staleAndCurrent();
    exec(
        "INSERT INTO "
            + database
            + ".accounts (id, owner, balance) VALUES (130, 'a', 0), (131, 'a', 0), (132, 'a', 0)",
        // a row a newer holder of the resource wrote: the row guard refuses it
        "UPDATE "
            + database
            + ".accounts SET fence_token = "
            + (h.current().token().value() + 1)
            + ", fence_resource = '"
            + h.current().resource()
            + "' WHERE id = 132");
    Fencing.run(
        h.current(),
        () -> {
          try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            long before = sessionStatus(c, "Com_stmt_execute");
            try (PreparedStatement u =
                GuardedStatements.update(
                    c, database + ".accounts", "balance = balance + 1", "id = ?")) {
              for (long id = 130; id <= 132; id++) {
                u.setLong(1, id);
                u.addBatch();
              }
              assertThat(u.executeBatch()).containsExactly(1, 1, 0);
            }
            assertThat(sessionStatus(c, "Com_stmt_execute") - before)
                .as("server-side executions of the batch's rows")
                .isEqualTo(3);
            c.commit();
          }
        });
    Fencing.run(
        h.stale(),
        () -> {
          try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement u =
                GuardedStatements.update(c, database + ".accounts", "balance = 100", "id = ?")) {
              u.setLong(1, 130);
              u.addBatch();
              assertThatThrownBy(u::executeBatch).isInstanceOf(StaleTokenException.class);
            }
            c.rollback();
          }
        });
    assertThat(
            query(
                "SELECT SUM(balance) FROM " + database + ".accounts WHERE id BETWEEN 130 AND 132"))
        .isEqualTo("2");
    // fencing off: the stale holder's row, unguarded, goes through
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      assertThat(
              s.executeUpdate("UPDATE " + database + ".accounts SET balance = 100 WHERE id = 130"))
          .isEqualTo(1);
    }
  }

  /**
   * With Connector/J's bulk protocol in the URL ({@code useServerPrepStmts=true&useBulkStmts=true})
   * a batch reports no count per row ({@code SUCCESS_NO_INFO}): a stale holder's auto-commit batch,
   * which the database refuses row by row, is still reported as a {@link StaleTokenException}
   * rather than as success. Failed before such counts were classified (no exception, counts -2).
   */
  @Test
  void aStaleBatchInTheBulkProtocolIsReportedThoughTheDriverGivesNoCounts() throws SQLException {
    Holders h = staleAndCurrent();
    exec("INSERT INTO " + database + ".accounts (id, owner, balance) VALUES (140, 'a', 0)");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        ROOT_URL.replace("/test?", "/" + database + "?")
            + "&useServerPrepStmts=true&useBulkStmts=true");
    config.setMaximumPoolSize(2);
    try (HikariDataSource bulkPool = new HikariDataSource(config)) {
      FencedDataSource bulk =
          FencedDataSource.wrap(bulkPool, FenceOptions.defaults().withSchema(fenceDb));
      for (boolean autoCommit : new boolean[] {true, false}) {
        Fencing.run(
            h.stale(),
            () -> {
              try (Connection c = bulk.getConnection()) {
                c.setAutoCommit(autoCommit);
                try (PreparedStatement u =
                    GuardedStatements.update(
                        c, database + ".accounts", "balance = 100", "id = ?")) {
                  for (int i = 0; i < 2; i++) {
                    u.setLong(1, 140);
                    u.addBatch();
                  }
                  assertStale(h, u::executeBatch);
                }
                if (!autoCommit) {
                  c.rollback();
                }
              }
            });
      }
      Fencing.run(
          h.current(),
          () -> {
            try (Connection c = bulk.getConnection()) {
              try (PreparedStatement u =
                  GuardedStatements.update(
                      c, database + ".accounts", "balance = balance + 1", "id = ?")) {
                for (int i = 0; i < 2; i++) {
                  u.setLong(1, 140);
                  u.addBatch();
                }
                assertThat(u.executeBatch()).containsOnly(Statement.SUCCESS_NO_INFO);
              }
            }
          });
    }
    assertThat(query("SELECT balance FROM " + database + ".accounts WHERE id = 140"))
        .isEqualTo("2");
    // fencing off: the stale holder's row, unguarded, goes through
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      assertThat(
              s.executeUpdate("UPDATE " + database + ".accounts SET balance = 100 WHERE id = 140"))
          .isEqualTo(1);
    }
  }

  private static long sessionStatus(Connection c, String name) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE '" + name + "'")) {
      assertThat(rs.next()).isTrue();
      return rs.getLong(2);
    }
  }

  @Test
  void plainWritesOfFencedTablesAreRefusedInAScope() throws SQLException {
    Holders h = staleAndCurrent();
    Fencing.run(
        h.current(),
        () -> {
          try (Connection c = db.getConnection()) {
            assertThatThrownBy(
                    () -> c.prepareStatement("UPDATE " + database + ".accounts SET owner = 'p'"))
                .isInstanceOf(SQLFeatureNotSupportedException.class);
            try (PreparedStatement read =
                    c.prepareStatement("SELECT COUNT(*) FROM " + database + ".accounts");
                ResultSet rs = read.executeQuery()) {
              assertThat(rs.next()).isTrue();
            }
          }
        });
  }

  @Test
  void fencedDslWritesWithJooqsMariaDbDialect() throws SQLException {
    exec("INSERT INTO " + database + ".accounts (id, owner, balance) VALUES (30, 'a', 0)");
    Holders h = staleAndCurrent();
    dev.fencing.jdbc.jooq.FencedDsl dsl =
        new dev.fencing.jdbc.jooq.FencedDsl(FenceOptions.defaults().withSchema(fenceDb));
    org.jooq.Table<?> accounts =
        org.jooq.impl.DSL.table(org.jooq.impl.DSL.name(database, "accounts"));
    org.jooq.Field<Long> id = org.jooq.impl.DSL.field(org.jooq.impl.DSL.name("id"), Long.class);
    org.jooq.Field<String> owner =
        org.jooq.impl.DSL.field(org.jooq.impl.DSL.name("owner"), String.class);
    org.jooq.Field<Long> balance =
        org.jooq.impl.DSL.field(org.jooq.impl.DSL.name("balance"), Long.class);
    org.jooq.DSLContext ctx = org.jooq.impl.DSL.using(db, org.jooq.SQLDialect.MARIADB);
    Fencing.run(
        h.current(),
        () -> {
          assertThat(dsl.update(ctx, accounts, java.util.Map.of(owner, "dsl"), id.eq(30L)))
              .isEqualTo(1);
          assertThat(
                  dsl.insert(ctx, accounts, java.util.Map.of(id, 31L, owner, "dsl", balance, 1L)))
              .isEqualTo(1);
          assertThat(
                  dsl.upsert(
                      ctx,
                      accounts,
                      java.util.Map.of(id, 31L, owner, "dsl-upsert", balance, 2L),
                      List.of(id)))
              .isPositive();
          assertThat(dsl.update(ctx, accounts, java.util.Map.of(owner, "x"), id.eq(999L))).isZero();
        });
    Fencing.run(
        h.stale(),
        () -> {
          for (Runnable write :
              List.<Runnable>of(
                  () -> dsl.update(ctx, accounts, java.util.Map.of(owner, "stale"), id.eq(30L)),
                  () -> dsl.delete(ctx, accounts, id.eq(31L)),
                  () ->
                      dsl.insert(
                          ctx, accounts, java.util.Map.of(id, 32L, owner, "stale", balance, 0L)),
                  () ->
                      dsl.upsert(
                          ctx,
                          accounts,
                          java.util.Map.of(id, 30L, owner, "stale", balance, 0L),
                          List.of(id)))) {
            assertThatThrownBy(write::run)
                .isInstanceOf(org.jooq.exception.DataAccessException.class)
                .hasCauseInstanceOf(StaleTokenException.class);
          }
        });
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 30")).isEqualTo("dsl");
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 31"))
        .isEqualTo("dsl-upsert");
    assertThat(query("SELECT COUNT(*) FROM " + database + ".accounts WHERE id = 32"))
        .isEqualTo("0");
  }

  /**
   * {@code FencedDsl.guard(table)}, the bare condition in a query built by hand, renders MariaDB's
   * fence check when the query is rendered for MariaDB: the current holder writes, the stale holder
   * writes nothing, and the same stale query without the guard (fencing off) overwrites the row.
   */
  @Test
  void fencedDslGuardConditionRendersInMariaDbsDialect() throws SQLException {
    exec("INSERT INTO " + database + ".accounts (id, owner, balance) VALUES (40, 'a', 0)");
    Holders h = staleAndCurrent();
    dev.fencing.jdbc.jooq.FencedDsl dsl =
        new dev.fencing.jdbc.jooq.FencedDsl(FenceOptions.defaults().withSchema(fenceDb));
    org.jooq.Table<?> accounts =
        org.jooq.impl.DSL.table(org.jooq.impl.DSL.name(database, "accounts"));
    org.jooq.Field<Long> id = org.jooq.impl.DSL.field(org.jooq.impl.DSL.name("id"), Long.class);
    org.jooq.Field<String> owner =
        org.jooq.impl.DSL.field(org.jooq.impl.DSL.name("owner"), String.class);
    org.jooq.DSLContext ctx = org.jooq.impl.DSL.using(db, org.jooq.SQLDialect.MARIADB);
    java.util.function.Function<String, Integer> guardedSetOwner =
        name ->
            ctx.update(accounts)
                .set(owner, name)
                .set(dsl.fenceColumn(accounts), dsl.token())
                .set(dsl.resourceColumn(accounts), Fencing.currentLease().orElseThrow().resource())
                .where(id.eq(40L))
                .and(dsl.guard(accounts))
                .execute();

    assertThat(Fencing.call(h.current(), () -> guardedSetOwner.apply("current"))).isEqualTo(1);
    assertThat(Fencing.call(h.stale(), () -> guardedSetOwner.apply("stale"))).isZero();

    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 40"))
        .isEqualTo("current");
    assertThat(query("SELECT fence_token FROM " + database + ".accounts WHERE id = 40"))
        .isEqualTo(Long.toString(h.current().token().value()));
    // fencing off: the same stale query without the guard, on the plain pool, overwrites the row
    org.jooq.DSLContext unfenced = org.jooq.impl.DSL.using(pool, org.jooq.SQLDialect.MARIADB);
    assertThat(
            Fencing.call(
                h.stale(),
                () -> unfenced.update(accounts).set(owner, "stale").where(id.eq(40L)).execute()))
        .isEqualTo(1);
    assertThat(query("SELECT owner FROM " + database + ".accounts WHERE id = 40"))
        .isEqualTo("stale");
  }

  private interface Write {
    void run() throws SQLException;
  }

  private static void assertStale(Holders h, Write write) {
    assertThatThrownBy(write::run)
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.resource()).isEqualTo(h.stale().resource());
              assertThat(e.attemptedToken()).isEqualTo(h.stale().token().value());
              assertThat(e.currentToken()).isEqualTo(h.current().token().value());
            });
  }

  private String query(String sql) {
    try (Connection c = DriverManager.getConnection(ROOT_URL);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(ROOT_URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(
          "MariaDB at "
              + ROOT_URL
              + " failed: "
              + e.getMessage()
              + " (start it with: start-stop-daemon --start --oknodo --background --exec"
              + " /usr/sbin/mariadbd, or .ci/run)",
          e);
    }
  }
}
