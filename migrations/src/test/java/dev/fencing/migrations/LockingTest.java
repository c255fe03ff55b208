package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** DDL on user tables: short exclusive locks, lock_timeout, retries, bounded failure. */
class LockingTest {
  private static final TestDb db = new TestDb();
  private static DataSource ds;
  private static String app;

  @BeforeAll
  static void setUp() {
    ds = TestDb.dataSource();
    app = db.createSchema("lock_app");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  @Test
  void shouldAddTheColumnToAMillionRowTableHoldingTheLockWellUnderASecond() {
    String fencing = db.newSchema("lock_fz");
    TestDb.exec(
        "CREATE TABLE " + app + ".big (id bigint PRIMARY KEY, payload text NOT NULL)",
        "INSERT INTO " + app + ".big SELECT g, md5(g::text) FROM generate_series(1, 1000000) g",
        "ANALYZE " + app + ".big");
    long relfilenode =
        TestDb.queryLong("SELECT relfilenode FROM pg_class WHERE oid = ?::regclass", app + ".big");

    long start = System.nanoTime();
    MigrationReport report =
        FencingMigrations.migrate(
            ds,
            MigrationOptions.builder()
                .schema(fencing)
                .enforce(app + ".big", EnforcementMode.LENIENT)
                .build());
    long total = System.nanoTime() - start;

    System.out.printf(
        "[measure] 1,000,000-row table: longest table lock held %.2f ms (ALTER + trigger, lock"
            + " granted to commit); whole migrate() %.1f ms%n",
        report.maxLockHeld().toNanos() / 1e6, total / 1e6);
    assertThat(report.columnsAdded()).containsExactly(app + ".big");
    assertThat(report.maxLockHeld()).isLessThan(Duration.ofSeconds(1));
    // Metadata-only: the table was not rewritten.
    assertThat(
            TestDb.queryLong(
                "SELECT relfilenode FROM pg_class WHERE oid = ?::regclass", app + ".big"))
        .isEqualTo(relfilenode);
    assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".big WHERE fence_token = 0"))
        .isEqualTo(1_000_000);
  }

  @Test
  void shouldRetryWhileALongTransactionHoldsTheTableAndSucceedOnceItEnds() throws Exception {
    String fencing = db.newSchema("lock_fz");
    TestDb.exec(
        "CREATE TABLE " + app + ".busy (id int PRIMARY KEY)",
        "INSERT INTO " + app + ".busy VALUES (1)");
    FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());

    try (Connection blocker = TestDb.connect();
        Statement s = blocker.createStatement()) {
      blocker.setAutoCommit(false);
      s.executeQuery("SELECT count(*) FROM " + app + ".busy").close(); // ACCESS SHARE until commit

      CompletableFuture<MigrationReport> migration =
          CompletableFuture.supplyAsync(
              () ->
                  FencingMigrations.migrate(
                      ds,
                      MigrationOptions.builder()
                          .schema(fencing)
                          .enforce(app + ".busy", EnforcementMode.STRICT)
                          .lockTimeout(Duration.ofMillis(100))
                          .maxTotalWait(Duration.ofSeconds(20))
                          .build()));
      Thread.sleep(1_000);
      assertThat(migration).isNotDone();
      // While the migration retries, other sessions are not stuck behind a queued ALTER for long.
      long readStart = System.nanoTime();
      assertThat(TestDb.queryLong("SELECT count(*) FROM " + app + ".busy")).isEqualTo(1);
      System.out.printf(
          "[measure] read on the busy table while the migration retried: %.1f ms%n",
          (System.nanoTime() - readStart) / 1e6);
      blocker.commit();

      MigrationReport report = migration.get(10, TimeUnit.SECONDS);
      System.out.printf(
          "[measure] migration behind a long transaction: %d DDL transactions, %d attempts%n",
          report.ddlStatements(), report.attempts());
      assertThat(report.attempts()).isGreaterThan(report.ddlStatements());
      assertThat(report.columnsAdded()).containsExactly(app + ".busy");
      assertThat(report.triggersInstalled()).containsExactly(app + ".busy (strict)");
    }
  }

  @Test
  void shouldFailWithinTheBoundNamingTheTableWhenTheTransactionNeverEnds() throws Exception {
    String fencing = db.newSchema("lock_fz");
    TestDb.exec("CREATE TABLE " + app + ".stuck (id int PRIMARY KEY)");
    FencingMigrations.migrate(ds, MigrationOptions.builder().schema(fencing).build());

    try (Connection blocker = TestDb.connect();
        Statement s = blocker.createStatement()) {
      blocker.setAutoCommit(false);
      s.execute("LOCK TABLE " + app + ".stuck IN ACCESS SHARE MODE");

      long start = System.nanoTime();
      LockNotAcquiredException e =
          catchThrowableOfType(
              LockNotAcquiredException.class,
              () ->
                  FencingMigrations.migrate(
                      ds,
                      MigrationOptions.builder()
                          .schema(fencing)
                          .fence(app + ".stuck")
                          .lockTimeout(Duration.ofMillis(100))
                          .maxTotalWait(Duration.ofMillis(1500))
                          .build()));
      long elapsedMs = (System.nanoTime() - start) / 1_000_000;

      assertThat(e).isNotNull();
      assertThat(e.getMessage()).contains(app + ".stuck").contains("lock_timeout");
      assertThat(e.table()).isEqualTo(app + ".stuck");
      assertThat(e.attempts()).isGreaterThan(1);
      assertThat(elapsedMs).isLessThan(5_000);
      blocker.rollback();
    }
    assertThat(
            TestDb.queryLong(
                "SELECT count(*) FROM information_schema.columns"
                    + " WHERE table_schema = ? AND table_name = 'stuck' AND column_name = 'fence_token'",
                app))
        .isZero();
  }

  @Test
  void shouldGiveUpAfterMaxAttempts() throws Exception {
    String fencing = db.newSchema("lock_fz");
    TestDb.exec("CREATE TABLE " + app + ".stuck2 (id int PRIMARY KEY)");
    try (Connection blocker = TestDb.connect();
        Statement s = blocker.createStatement()) {
      blocker.setAutoCommit(false);
      s.execute("LOCK TABLE " + app + ".stuck2 IN ACCESS SHARE MODE");
      LockNotAcquiredException e =
          catchThrowableOfType(
              LockNotAcquiredException.class,
              () ->
                  FencingMigrations.migrate(
                      ds,
                      MigrationOptions.builder()
                          .schema(fencing)
                          .fence(app + ".stuck2")
                          .lockTimeout(Duration.ofMillis(50))
                          .maxAttempts(3)
                          .build()));
      assertThat(e).isNotNull();
      assertThat(e.attempts()).isEqualTo(3);
      blocker.rollback();
    }
  }
}
