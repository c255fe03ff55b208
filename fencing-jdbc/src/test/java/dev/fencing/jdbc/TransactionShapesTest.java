package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.internal.GuardedSql;
import dev.fencing.schema.DatabaseProduct;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A stale holder that goes on in transaction shapes the wrapper does not see: its writes must still
 * be refused by the database, whatever the wrapper believes about the transaction.
 */
class TransactionShapesTest {

  private static FencingFixture fx;
  private static int resources;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  /**
   * A registered holder that goes on believing it holds its lease whatever happens (a rejection
   * marks the real lease lost at once): only the database can stop its writes, which is what these
   * shapes test.
   */
  private static Lease registeredHolder() {
    return FencingFixture.unawareOfLoss(
        fx.fencedLeases()
            .acquire("shape-" + ++resources, FencingFixture.lease(Duration.ofSeconds(30))));
  }

  /** The successor's registration, as {@link ResourceFence} writes it, on its own connection. */
  private static void moveFenceOn(Connection successor, Lease holder) throws SQLException {
    try (PreparedStatement register =
        successor.prepareStatement(
            "UPDATE "
                + fx.fenceSchema
                + ".fence SET token = token + 1, lease_id = 'successor' WHERE resource = ?")) {
      register.setString(1, holder.resource());
      assertThat(register.executeUpdate()).isEqualTo(1);
    }
  }

  private static void moveFenceOn(Lease holder) throws SQLException {
    try (Connection successor = DriverManager.getConnection(FencingFixture.URL)) {
      moveFenceOn(successor, holder);
    }
  }

  private static long backendPid(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rows = s.executeQuery("SELECT pg_backend_pid()")) {
      rows.next();
      return rows.getLong(1);
    }
  }

  /** Waits until backend {@code pid} waits for a lock: an observable state, not a sleep. */
  private static void awaitWaitingForLock(long pid) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (fx.queryString("SELECT wait_event_type FROM pg_stat_activity WHERE pid = " + pid)
          .filter("Lock"::equals)
          .isPresent()) {
        return;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("backend " + pid + " never waited for the fence row's lock");
  }

  private static int guardedOwner(Connection c, long id, String owner) throws SQLException {
    try (PreparedStatement update =
        GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?")) {
      update.setString(1, owner);
      update.setLong(2, id);
      return update.executeUpdate();
    }
  }

  @Test
  void aBatchVerifiedWhileTheSuccessorRegistersLeavesNoMarkThatLetsTheNextWriteThrough()
      throws Exception {
    fx.insertAccount(101, "none", 0);
    fx.insertAccount(102, "none", 0);
    Lease holder = registeredHolder();
    try (Connection successor = DriverManager.getConnection(FencingFixture.URL)) {
      successor.setAutoCommit(false);
      moveFenceOn(successor, holder); // in flight: done, not committed
      Fencing.run(
          holder,
          () -> {
            try (Connection c = fx.db.getConnection()) {
              c.setAutoCommit(false);
              long pid = backendPid(c);
              PreparedStatement batch =
                  GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?");
              batch.setString(1, "stale-batch");
              batch.setLong(2, 101);
              batch.addBatch();
              Future<int[]> blocked = threads.submit(batch::executeBatch);
              awaitWaitingForLock(pid);
              successor.commit();
              assertThatThrownBy(() -> blocked.get(10, TimeUnit.SECONDS))
                  .isInstanceOf(ExecutionException.class)
                  .cause()
                  .isInstanceOf(StaleTokenException.class);
              batch.close();
              // a DAO that skips the failed item and goes on in the same transaction
              assertThatThrownBy(() -> guardedOwner(c, 102, "stale-single"))
                  .isInstanceOf(StaleTokenException.class);
              c.commit();
            }
          });
    }
    assertThat(fx.ownerOf(101)).isEqualTo("none");
    assertThat(fx.ownerOf(102)).isEqualTo("none");
  }

  @Test
  void withoutFencingTheSameInterleavingCommitsTheStaleWrite() throws Exception {
    fx.insertAccount(103, "none", 0);
    Lease holder = registeredHolder();
    moveFenceOn(holder);
    assertThat(fx.unguardedSetOwner(103, "stale")).isEqualTo(1);
    assertThat(fx.ownerOf(103)).as("the violation the guards prevent").isEqualTo("stale");
  }

  @Test
  void aBatchRowWritesOnlyAfterTheFenceRowWasLockedAndMarkedInItsOwnTransaction() throws Exception {
    fx.insertAccount(104, "none", 0);
    Lease holder = registeredHolder();
    GuardedSql.Bound guards =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, fx.fenceSchema).bind(holder);
    GuardedSql.Bound otherBinding =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, fx.fenceSchema).bind(holder);
    String batched = guards.update(fx.table("accounts"), "owner = ?", "id = ?").batched();
    try (Connection raw = DriverManager.getConnection(FencingFixture.URL)) {
      raw.setAutoCommit(false);
      assertThat(ownerRow(raw, batched, "unmarked")).as("no marker: nothing written").isZero();
      verify(raw, otherBinding);
      assertThat(ownerRow(raw, batched, "another binding's marker"))
          .as("each binding draws its own marker")
          .isZero();
      verify(raw, guards);
      assertThat(ownerRow(raw, batched, "marked")).isEqualTo(1);
      raw.commit();
      assertThat(ownerRow(raw, batched, "next transaction")).as("marker gone").isZero();
      raw.commit();
    }
    assertThat(fx.ownerOf(104)).isEqualTo("marked");
  }

  @Test
  void aBatchMarkerLeftAtSessionLevelDoesNotLetRowsWriteInALaterTransaction() throws Exception {
    fx.insertAccount(105, "none", 0);
    Lease holder = registeredHolder();
    GuardedSql.Bound guards =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, fx.fenceSchema).bind(holder);
    String batched = guards.update(fx.table("accounts"), "owner = ?", "id = ?").batched();
    try (Connection raw = DriverManager.getConnection(FencingFixture.URL)) {
      raw.setAutoCommit(false);
      verify(raw, guards);
      assertThat(setOwner(raw, batched, 105, "verified")).isEqualTo(1);
      raw.commit();
      try (Statement s = raw.createStatement()) {
        s.execute("SET fencing.guard_verified = 'forged-by-hand'");
      }
      raw.commit();
      assertThat(setOwner(raw, batched, 105, "after a session-level value"))
          .as("a session-level value is not the marker")
          .isZero();
      raw.rollback();
    }
    assertThat(fx.ownerOf(105)).isEqualTo("verified");
  }

  private static void verify(Connection c, GuardedSql.Bound guards) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet verified = s.executeQuery(guards.verify())) {
      assertThat(verified.next()).as("the fence names the holder").isTrue();
    }
  }

  private static int ownerRow(Connection c, String sql, String owner) throws SQLException {
    return setOwner(c, sql, 104, owner);
  }

  private static int setOwner(Connection c, String sql, long id, String owner) throws SQLException {
    try (PreparedStatement update = c.prepareStatement(sql)) {
      update.setString(1, owner);
      update.setLong(2, id);
      return update.executeUpdate();
    }
  }

  /** Ways a transaction ends that the wrapper's own commit() and rollback() never see. */
  enum HiddenEnd {
    SQL_COMMIT {
      @Override
      void begin(Connection c) {}

      @Override
      void end(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.execute("COMMIT");
        }
      }
    },
    SQL_ROLLBACK_TO_SAVEPOINT {
      @Override
      void begin(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.execute("SAVEPOINT before_batch");
        }
      }

      @Override
      void end(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
          s.execute("ROLLBACK TO SAVEPOINT before_batch");
        }
      }
    },
    COMMIT_ON_THE_UNWRAPPED_CONNECTION {
      @Override
      void begin(Connection c) {}

      @Override
      void end(Connection c) throws SQLException {
        ((Connection) c.unwrap(org.postgresql.PGConnection.class)).commit();
      }
    };

    abstract void begin(Connection c) throws SQLException;

    abstract void end(Connection c) throws SQLException;
  }

  @ParameterizedTest
  @EnumSource(HiddenEnd.class)
  void aBatchAfterATransactionEndedOutOfSightIsStillFenced(HiddenEnd shape) throws Exception {
    long id = 200 + shape.ordinal();
    fx.insertAccount(id, "none", 0);
    Lease holder = registeredHolder();
    Fencing.run(
        holder,
        () -> {
          try (Connection c = fx.db.getConnection()) {
            c.setAutoCommit(false);
            shape.begin(c);
            try (PreparedStatement update =
                GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?")) {
              update.setString(1, "first");
              update.setLong(2, id);
              update.addBatch();
              assertThat(update.executeBatch()).containsExactly(1);
              shape.end(c);
              moveFenceOn(holder); // the successor registers and commits
              update.setString(1, "stale");
              update.setLong(2, id);
              update.addBatch();
              assertThatThrownBy(update::executeBatch).isInstanceOf(StaleTokenException.class);
            }
            c.rollback();
            c.setAutoCommit(true);
          }
        });
    assertThat(fx.ownerOf(id)).isNotEqualTo("stale");
  }

  @ParameterizedTest
  @EnumSource(HiddenEnd.class)
  void triggerModeCarriesTheRegistrationIntoTheNextTransactionWhateverEndedThePreviousOne(
      HiddenEnd shape) throws Exception {
    long id = 300 + 10L * shape.ordinal();
    Lease holder = registeredHolder();
    Fencing.run(
        holder,
        () -> {
          try (Connection c = fx.triggerDb.getConnection()) {
            c.setAutoCommit(false);
            shape.begin(c);
            plainAudit(c, id);
            shape.end(c);
            plainAudit(c, id + 1); // the current holder's write: never refused
            c.commit();
            c.setAutoCommit(true);
          }
        });
    assertThat(
            fx.queryLong(
                "SELECT count(*) FROM "
                    + fx.table("audited")
                    + " WHERE id = "
                    + (id + 1)
                    + " AND fence_token = "
                    + holder.token().value()))
        .isEqualTo(1);
  }

  private static void plainAudit(Connection c, long id) throws SQLException {
    try (PreparedStatement insert =
        c.prepareStatement("INSERT INTO " + fx.table("audited") + " (id, note) VALUES (?, 'x')")) {
      insert.setLong(1, id);
      assertThat(insert.executeUpdate()).isEqualTo(1);
    }
  }
}
