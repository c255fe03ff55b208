package dev.fencing.jdbc.interleaving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.LeaseLostSQLException;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.jdbc.interleaving.InterleavingDb.Holders;
import dev.fencing.jdbc.interleaving.InterleavingDb.Registration;
import dev.fencing.jdbc.interleaving.InterleavingDb.RowState;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConnectionProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.PGConnection;

/**
 * Focused reproducers of the findings of issue 10 that the interleaving matrix covers only as a
 * class: 1 (batch verification marks the transaction verified before it holds the lock), 2 (Java
 * side flags outlive the database transaction), 3 (trigger-mode settings leak into the pool) and 12
 * (errors that mislead). Each stale-writer reproducer has its fencing-off control, which must
 * observe the violation.
 */
class ReportedFindingsTest {

  private static InterleavingDb db;
  private static ExecutorService writerThread;
  private static long nextId = 1;

  @BeforeAll
  static void setUp() {
    db = new InterleavingDb();
    writerThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "stale-writer"));
  }

  @AfterAll
  static void tearDown() {
    if (writerThread != null) {
      writerThread.shutdownNow();
    }
    if (db != null) {
      db.close();
    }
  }

  // ------------------------------------------------------------------ finding 1

  /** What the DAO writes next, in the same transaction, after its batch was rejected. */
  enum FollowUp {
    SINGLE_GUARDED_UPDATE,
    FENCED_DSL_UPDATE
  }

  @ParameterizedTest(name = "then a {0}")
  @EnumSource(FollowUp.class)
  void finding1_aBatchRejectedAfterAnInFlightRegistrationLeavesNoVerifiedMarkForTheNextWrite(
      FollowUp followUp) throws Exception {
    try (Holders holders = db.holders()) {
      long first = rowIds(2);
      long second = first + 1;
      db.seed(items(), List.of(first, second), 0, null);
      Registration registration = db.registration(holders);
      Lease stale = holders.stale();
      Connection c = onWriter(() -> Fencing.call(stale, db.guardDb::getConnection));
      try {
        c.setAutoCommit(false);
        PreparedStatement batch = GuardedStatements.update(c, items(), "v = ?", "id = ?");
        batch.setString(1, "stale-batch");
        batch.setLong(2, first);
        batch.addBatch();

        registration.start();
        Future<int[]> executing = writerThread.submit(batch::executeBatch);
        assertThat(db.awaitLockWaitOrDone(backendPid(c), executing))
            .as("the batch's fence verification waits for the in-flight registration")
            .isTrue();
        registration.commit(items(), first, second);
        assertThat(catchThrowable(() -> result(executing)))
            .as("the batch, after the registration committed")
            .isInstanceOf(StaleTokenException.class);

        // the DAO logs the failed item and goes on with the next one, in the same transaction
        Throwable next =
            catchThrowable(
                () ->
                    onWriter(
                        () -> {
                          Fencing.run(stale, () -> writeNext(followUp, c, second));
                          return null;
                        }));
        onWriter(
            () -> {
              c.commit();
              return null;
            });
        assertThat(db.rows(items(), second, second).get(second))
            .as(
                "row %d after the stale holder's next write committed (token %d registered)",
                second, holders.successor().token().value())
            .isEqualTo(new RowState("seed", 0, null));
        assertThat(next).as("the next write of the stale holder").isNotNull();
      } finally {
        registration.abandon();
        onWriter(
            () -> {
              c.close();
              return null;
            });
      }
    }
  }

  @Test
  void finding1_control_withoutFencingTheNextWriteCommitsAfterTheRegistration() throws Exception {
    try (Holders holders = db.holders()) {
      long first = rowIds(2);
      long second = first + 1;
      db.seed(items(), List.of(first, second), 0, null);
      Registration registration = db.registration(holders);
      try (Connection c = db.pool.getConnection()) {
        c.setAutoCommit(false);
        PreparedStatement batch =
            c.prepareStatement("UPDATE " + items() + " SET v = ? WHERE id = ?");
        batch.setString(1, "stale-batch");
        batch.setLong(2, first);
        batch.addBatch();
        registration.start();
        Future<int[]> executing = writerThread.submit(batch::executeBatch);
        db.awaitLockWaitOrDone(backendPid(c), executing);
        registration.commit(items(), first, second);
        result(executing);
        try (PreparedStatement next =
            c.prepareStatement("UPDATE " + items() + " SET v = 'stale-next' WHERE id = ?")) {
          next.setLong(1, second);
          next.executeUpdate();
        }
        c.commit();
      } finally {
        registration.abandon();
      }
      assertThat(db.rows(items(), second, second).get(second).v()).isEqualTo("stale-next");
    }
  }

  // ------------------------------------------------------------------ finding 2

  /** A transaction boundary that the wrapper does not see. */
  enum HiddenBoundary {
    SQL_TEXT_COMMIT,
    ROLLBACK_TO_SAVEPOINT,
    COMMIT_ON_THE_UNWRAPPED_CONNECTION
  }

  @ParameterizedTest(name = "after {0}")
  @EnumSource(HiddenBoundary.class)
  void finding2_theNextBatchAfterAHiddenTransactionBoundaryChecksTheFenceAgain(
      HiddenBoundary boundary) throws Exception {
    SecondBatch second = staleBatchAfter(boundary, true);
    assertThat(second.row())
        .as("the stale holder's second batch's row, after the successor registered")
        .isEqualTo(new RowState("seed", 0, null));
    assertThat(second.rejection())
        .as("the stale holder's second batch, after the successor registered")
        .isInstanceOf(StaleTokenException.class);
  }

  @ParameterizedTest(name = "after {0}")
  @EnumSource(HiddenBoundary.class)
  void finding2_control_withoutFencingTheSecondBatchCommits(HiddenBoundary boundary)
      throws Exception {
    assertThat(staleBatchAfter(boundary, false).row().v()).isEqualTo("stale-second");
  }

  /** The second batch's row afterwards, and how the batch failed (null if it did not). */
  record SecondBatch(RowState row, Throwable rejection) {}

  /**
   * A batch while the holder is registered, a boundary the wrapper does not see, the successor's
   * registration, and a second batch in the same session, committed unless it failed.
   */
  private static SecondBatch staleBatchAfter(HiddenBoundary boundary, boolean fenced)
      throws Exception {
    try (Holders holders = db.holders()) {
      long first = rowIds(2);
      long second = first + 1;
      db.seed(items(), List.of(first, second), 0, null);
      Lease stale = holders.stale();
      Throwable rejected;
      Connection c =
          fenced ? Fencing.call(stale, db.guardDb::getConnection) : db.pool.getConnection();
      try {
        c.setAutoCommit(false);
        if (boundary == HiddenBoundary.ROLLBACK_TO_SAVEPOINT) {
          sql(c, "SAVEPOINT before_batch");
        }
        assertThat(batch(c, fenced, "stale-first", first)).containsExactly(1);
        switch (boundary) {
          case SQL_TEXT_COMMIT -> sql(c, "COMMIT");
          case ROLLBACK_TO_SAVEPOINT -> sql(c, "ROLLBACK TO SAVEPOINT before_batch");
          case COMMIT_ON_THE_UNWRAPPED_CONNECTION -> driver(c).commit();
        }
        db.registration(holders).startAndCommit(items(), first, second);
        rejected = catchThrowable(() -> batch(c, fenced, "stale-second", second));
        if (rejected == null) {
          c.commit();
        } else {
          c.rollback();
        }
      } finally {
        c.close();
      }
      return new SecondBatch(db.rows(items(), second, second).get(second), rejected);
    }
  }

  /*
   * The same flag in trigger mode ("settings carried in this transaction"): after a boundary the
   * wrapper does not see, the next statement goes out without the settings. On a lenient table the
   * trigger then lets the stale holder's write through unchecked; on a strict table it refuses the
   * current holder.
   */

  @ParameterizedTest(name = "after {0}")
  @EnumSource(
      value = HiddenBoundary.class,
      names = {"SQL_TEXT_COMMIT", "COMMIT_ON_THE_UNWRAPPED_CONNECTION"})
  void finding2_inTriggerModeTheStaleHoldersNextWriteOnALenientTableIsStillFenced(
      HiddenBoundary boundary) throws Exception {
    TriggerModeWrite second = triggerModeWriteAfter(boundary, lenient(), true, true);
    assertThat(second.row())
        .as("the stale holder's write on a lenient table, after the successor registered")
        .isEqualTo(new RowState("seed", 0, null));
    assertThat(second.rejection()).isInstanceOf(StaleTokenException.class);
  }

  @ParameterizedTest(name = "after {0}")
  @EnumSource(
      value = HiddenBoundary.class,
      names = {"SQL_TEXT_COMMIT", "COMMIT_ON_THE_UNWRAPPED_CONNECTION"})
  void finding2_control_withoutTheTriggerModeWrapperTheStaleWriteCommits(HiddenBoundary boundary)
      throws Exception {
    assertThat(triggerModeWriteAfter(boundary, lenient(), true, false).row().v())
        .isEqualTo("second");
  }

  @ParameterizedTest(name = "after {0}")
  @EnumSource(
      value = HiddenBoundary.class,
      names = {"SQL_TEXT_COMMIT", "COMMIT_ON_THE_UNWRAPPED_CONNECTION"})
  void finding2_inTriggerModeTheCurrentHoldersNextWriteOnAStrictTableIsAccepted(
      HiddenBoundary boundary) throws Exception {
    TriggerModeWrite second = triggerModeWriteAfter(boundary, audited(), false, true);
    assertThat(second.rejection()).as("the current holder's second write").isNull();
    assertThat(second.row().v()).isEqualTo("second");
  }

  record TriggerModeWrite(RowState row, Throwable rejection) {}

  /**
   * A trigger-mode DAO writes, crosses {@code boundary}, and writes again in the same session, as
   * the stale holder (the successor registers at the boundary) or as the registered successor.
   */
  private static TriggerModeWrite triggerModeWriteAfter(
      HiddenBoundary boundary, String table, boolean asStaleHolder, boolean fenced)
      throws Exception {
    try (Holders holders = db.holders()) {
      long first = rowIds(2);
      long second = first + 1;
      db.seed(table, List.of(first, second), 0, null);
      if (!asStaleHolder) {
        db.registration(holders).startAndCommit(table, first, second);
      }
      Lease writer = asStaleHolder ? holders.stale() : holders.successor();
      Throwable rejected;
      Connection c =
          fenced ? Fencing.call(writer, db.triggerDb::getConnection) : db.pool.getConnection();
      try {
        c.setAutoCommit(false);
        update(c, table, first, "first");
        switch (boundary) {
          case SQL_TEXT_COMMIT -> sql(c, "COMMIT");
          case COMMIT_ON_THE_UNWRAPPED_CONNECTION -> driver(c).commit();
          case ROLLBACK_TO_SAVEPOINT -> throw new IllegalArgumentException(boundary.name());
        }
        if (asStaleHolder) {
          db.registration(holders).startAndCommit(table, first, second);
        }
        rejected = catchThrowable(() -> update(c, table, second, "second"));
        if (rejected == null) {
          c.commit();
        } else {
          c.rollback();
        }
      } finally {
        c.close();
      }
      return new TriggerModeWrite(db.rows(table, second, second).get(second), rejected);
    }
  }

  private static void update(Connection c, String table, long id, String v) throws SQLException {
    try (PreparedStatement update =
        c.prepareStatement("UPDATE " + table + " SET v = ? WHERE id = ?")) {
      update.setString(1, v);
      update.setLong(2, id);
      update.executeUpdate();
    }
  }

  private static int[] batch(Connection c, boolean fenced, String value, long id)
      throws SQLException {
    try (PreparedStatement update =
        fenced
            ? GuardedStatements.update(c, items(), "v = ?", "id = ?")
            : c.prepareStatement("UPDATE " + items() + " SET v = ? WHERE id = ?")) {
      update.setString(1, value);
      update.setLong(2, id);
      update.addBatch();
      return update.executeBatch();
    }
  }

  // ------------------------------------------------------------------ finding 3

  @Test
  void finding3_aTriggerModeDaoThatTogglesAutoCommitLeavesNoLeaseInThePool() throws Exception {
    try (Holders holders = db.holders()) {
      Lease holder = holders.stale(); // still the registered holder in this test
      long id = rowIds(3);
      triggerModeDaoTogglingAutoCommit(holder, id);

      Throwable unscoped = catchThrowable(() -> rawInsert(audited(), id + 2));
      RowState row = db.rows(audited(), id + 2, id + 2).get(id + 2);
      assertThat(row)
          .as(
              "an unscoped write on the strict table from the pool (lease %s has token %d)",
              holder.leaseId(), holder.token().value())
          .isNull();
      assertThat(unscoped)
          .as("an unscoped write on a strict table")
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF003"));
    } finally {
      db.settingsLeftInPool();
    }
  }

  @Test
  void finding3_afterTheSuccessorRegisteredAnUnscopedWriteOnALenientTableStillWorks()
      throws Exception {
    try (Holders holders = db.holders()) {
      long id = rowIds(3);
      triggerModeDaoTogglingAutoCommit(holders.stale(), id);
      db.registration(holders).startAndCommit(lenient(), id, id + 2);

      Throwable unscoped = catchThrowable(() -> rawInsert(lenient(), id + 2));
      assertThat(unscoped)
          .as("an unscoped write on a lenient table after the successor registered")
          .isNull();
      assertThat(db.rows(lenient(), id + 2, id + 2).get(id + 2))
          .as("an unscoped write on a lenient table carries no token")
          .isEqualTo(new RowState("raw", 0, null));
    } finally {
      db.settingsLeftInPool();
    }
  }

  @Test
  void finding3_control_aPooledConnectionThatCarriesALeaseWritesAsThatLease() throws Exception {
    try (Holders holders = db.holders()) {
      Lease holder = holders.stale();
      long id = rowIds(1);
      try (Connection c = db.pool.getConnection();
          PreparedStatement carry =
              c.prepareStatement(
                  "SELECT set_config('fencing.resource', ?, false),"
                      + " set_config('fencing.token', ?, false),"
                      + " set_config('fencing.lease_id', ?, false)")) {
        carry.setString(1, holder.resource());
        carry.setString(2, Long.toString(holder.token().value()));
        carry.setString(3, holder.leaseId());
        carry.execute();
      }
      rawInsert(audited(), id);
      assertThat(db.rows(audited(), id, id).get(id))
          .as("the leak the finding-3 tests look for, made by hand")
          .isEqualTo(new RowState("raw", holder.token().value(), holder.resource()));
    } finally {
      db.settingsLeftInPool();
    }
  }

  /**
   * A DAO on a trigger-mode data source: first statement in auto-commit, then {@code
   * setAutoCommit(false)}, a write, {@code commit()}, {@code close()} without restoring
   * auto-commit.
   */
  private static void triggerModeDaoTogglingAutoCommit(Lease lease, long id) throws Exception {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = db.triggerDb.getConnection()) {
            insert(c, audited(), id, "auto-commit");
            c.setAutoCommit(false);
            insert(c, audited(), id + 1, "in a transaction");
            c.commit();
          }
        });
    assertThat(db.rows(audited(), id, id + 1)).hasSize(2);
  }

  private static void rawInsert(String table, long id) throws SQLException {
    try (Connection c = db.pool.getConnection()) {
      insert(c, table, id, "raw");
    }
  }

  private static void insert(Connection c, String table, long id, String v) throws SQLException {
    try (PreparedStatement insert =
        c.prepareStatement("INSERT INTO " + table + " (id, v) VALUES (?, ?)")) {
      insert.setLong(1, id);
      insert.setString(2, v);
      insert.executeUpdate();
    }
  }

  // ------------------------------------------------------------------ finding 12

  @Test
  void finding12_aClientSideRejectionReportsTheTokenTheFenceActuallyHolds() throws Exception {
    // The documented story: a lease the JVM already knows lost is refused before any round trip
    // with LeaseLostSQLException (its cause the LeaseLostException), which names the lease and its
    // token and claims no fence figure it did not read (the old StaleTokenException said "current
    // 0" while the fence was at 2).
    String resource = "lost-" + rowIds(1);
    Lease lost = db.leases.acquire(resource, InterleavingDb.LEASE);
    db.registerCommitted(resource, lost.token().value(), lost.leaseId());
    Lease successor = null;
    try {
      Connection c = Fencing.call(lost, db.guardDb::getConnection);
      try {
        lost.close();
        successor = db.leases.acquire(resource, InterleavingDb.LEASE);
        db.registerCommitted(resource, successor.token().value(), successor.leaseId());
        assertThatThrownBy(() -> GuardedStatements.update(c, items(), "v = ?", "id = ?"))
            .isInstanceOf(LeaseLostSQLException.class)
            .hasCauseInstanceOf(LeaseLostException.class)
            .hasMessageContaining(resource)
            .hasMessageContaining("token " + lost.token().value())
            .hasMessageNotContaining("current 0");
      } finally {
        c.close();
      }
    } finally {
      if (successor != null) {
        successor.close();
      }
    }
  }

  @Test
  void finding12_aLeaseThatWasNeverRegisteredIsReportedAsNotRegisteredRatherThanStale()
      throws Exception {
    try (Holders holders = db.holders()) {
      long id = rowIds(1);
      db.seed(items(), List.of(id), 0, null);
      Lease unregistered = holders.successor(); // token t + 1; the fence still names token t
      Throwable thrown =
          catchThrowable(
              () ->
                  Fencing.run(
                      unregistered,
                      () -> {
                        try (Connection c = db.guardDb.getConnection();
                            PreparedStatement update =
                                GuardedStatements.update(c, items(), "v = ?", "id = ?")) {
                          update.setString(1, "unregistered");
                          update.setLong(2, id);
                          update.executeUpdate();
                        }
                      }));
      assertThat(thrown)
          .as("a write by a lease that never registered")
          .isInstanceOf(SQLException.class)
          .hasMessageFindingMatch("(?i)(not|never) (been )?registered")
          .satisfies(
              e ->
                  assertThat(e.getMessage())
                      .as("it is not stale: its token is above the fence's")
                      .doesNotContainIgnoringCase("stale"));
      assertThat(db.rows(items(), id, id).get(id).v()).isEqualTo("seed");
    }
  }

  @Test
  void finding12_aNullSqlFragmentIsAnIllegalArgumentThatNamesTheArgument() throws Exception {
    try (Holders holders = db.holders()) {
      db.registration(holders).startAndCommit(items(), 0, 0);
      Fencing.run(
          holders.successor(),
          () -> {
            try (Connection c = db.guardDb.getConnection()) {
              assertThatThrownBy(() -> GuardedStatements.update(c, items(), null, "id = ?"))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("assignments");
              assertThatThrownBy(() -> GuardedStatements.update(c, items(), "v = ?", null))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("condition");
              assertThatThrownBy(() -> GuardedStatements.delete(c, items(), null))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("condition");
              assertThatThrownBy(() -> GuardedStatements.insert(c, items(), "id", null))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("column");
              assertThatNullPointerException()
                  .isThrownBy(() -> GuardedStatements.update(null, items(), "v = ?", "id = ?"))
                  .withMessageContaining("connection");
            }
          });
    }
  }

  @Test
  void finding12_aGuardedStatementOnAStrictTriggerTableWithoutTriggerModeNamesTheOption()
      throws Exception {
    try (Holders holders = db.holders()) {
      long id = rowIds(1);
      db.seed(audited(), List.of(id), 0, null);
      db.registration(holders).startAndCommit(audited(), id, id);
      Throwable thrown =
          catchThrowable(
              () ->
                  Fencing.run(
                      holders.successor(),
                      () -> {
                        try (Connection c = db.guardDb.getConnection();
                            PreparedStatement update =
                                GuardedStatements.update(c, audited(), "v = ?", "id = ?")) {
                          update.setString(1, "current");
                          update.setLong(2, id);
                          update.executeUpdate();
                        }
                      }));
      assertThat(thrown)
          .as(
              "a guarded write on a strict trigger table through a data source without trigger mode")
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("withTriggerMode");
    }
  }

  @Test
  void finding12_theFencedDslReportsTheSameFiguresAsTheFence() throws Exception {
    try (Holders holders = db.holders()) {
      long id = rowIds(1);
      db.seed(items(), List.of(id), 0, null);
      db.registration(holders).startAndCommit(items(), id, id);
      FencedDsl dsl = new FencedDsl(db.options);
      Throwable thrown =
          catchThrowable(
              () ->
                  Fencing.run(
                      holders.stale(),
                      () -> {
                        try (Connection c = db.guardDb.getConnection()) {
                          dsl.update(
                              DSL.using(new DefaultConnectionProvider(c), SQLDialect.POSTGRES),
                              DSL.table(DSL.name(db.schema, "items")),
                              Map.of(StatementKind.V, "stale"),
                              StatementKind.ID.eq(id));
                        }
                      }));
      assertThat(thrown).isNotNull();
      StaleTokenException stale =
          thrown instanceof StaleTokenException direct
              ? direct
              : (StaleTokenException) thrown.getCause();
      assertThat(stale.resource()).isEqualTo(holders.resource());
      assertThat(stale.attemptedToken()).isEqualTo(holders.stale().token().value());
      assertThat(stale.currentToken()).isEqualTo(holders.successor().token().value());
    }
  }

  // ------------------------------------------------------------------ helpers

  private static String items() {
    return db.table("items");
  }

  private static String audited() {
    return db.table("audited");
  }

  private static String lenient() {
    return db.table("lenient");
  }

  /** Reserves {@code count} consecutive row ids and returns the first. */
  private static synchronized long rowIds(int count) {
    long first = nextId;
    nextId += count;
    return first;
  }

  private static void writeNext(FollowUp followUp, Connection c, long id) throws SQLException {
    switch (followUp) {
      case SINGLE_GUARDED_UPDATE -> {
        try (PreparedStatement update = GuardedStatements.update(c, items(), "v = ?", "id = ?")) {
          update.setString(1, "stale-next");
          update.setLong(2, id);
          update.executeUpdate();
        }
      }
      case FENCED_DSL_UPDATE ->
          new FencedDsl(db.options)
              .update(
                  DSL.using(new DefaultConnectionProvider(c), SQLDialect.POSTGRES),
                  DSL.table(DSL.name(db.schema, "items")),
                  Map.of(StatementKind.V, "stale-next"),
                  StatementKind.ID.eq(id));
    }
  }

  private static <T> T onWriter(Callable<T> step) throws Exception {
    return result(writerThread.submit(step));
  }

  private static <T> T result(Future<T> step) throws Exception {
    try {
      return step.get(InterleavingDb.STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw new AssertionError(e.getCause());
    }
  }

  private static int backendPid(Connection c) throws SQLException {
    return c.unwrap(PGConnection.class).getBackendPID();
  }

  private static Connection driver(Connection c) throws SQLException {
    return (Connection) c.unwrap(PGConnection.class);
  }

  private static void sql(Connection c, String sql) throws SQLException {
    try (Statement statement = c.createStatement()) {
      statement.execute(sql);
    }
  }
}
