package dev.fencing.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The checker over planted histories on MariaDB: the same histories as {@link CheckerTest}, through
 * {@link MariaDbChaos}'s tables, write log and commit clock, plus the cases of the clock itself (a
 * transaction that takes it while a registration holds it, and the reverse; auto-commit writes; a
 * rolled-back transaction's key reused; a commit that skipped the clock; the fence table's
 * registration log).
 */
class MariaDbCheckerTest {

  private static final ChaosDatabase DB = MariaDbChaos.INSTANCE;
  private final List<Connection> connections = new ArrayList<>();
  private String suffix;
  private String schema;
  private Connection admin;

  @BeforeEach
  void createSchema() throws SQLException {
    DB.requireReachable();
    suffix = "chk" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
    schema = DB.schemaName(suffix);
    admin = connect();
    DB.create(admin, schema, 1);
  }

  @AfterEach
  void dropSchema() throws SQLException {
    for (Connection c : connections) {
      c.close();
    }
    DB.cleanUp(suffix, schema, DB.fenceSchemaName(suffix), false);
  }

  @Test
  void aCleanHistoryHasNoViolation() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    a.step("a-2");
    register(2, "b");
    writer(2, "b").step("b-1");
    register(3, "c");
    writer(3, "c").step("c-1");

    assertViolations(Map.of());
    assertThat(count("judged")).isEqualTo(4);
  }

  @Test
  void aStaleWriteThatRanBeforeTheSuccessorRegisteredAndCommittedAfterIsStaleAccepted()
      throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    a.begin();
    a.append(a.readSeq() + 1, "a-2"); // runs while lease a is still the registered one
    register(2, "b"); // the successor registers and commits
    a.commit(); // the stale transaction takes the clock and commits after it
    writer(2, "b").step("b-1"); // builds on the stale commit: no duplicate, no gap

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
  }

  @Test
  void aStaleItemTheSuccessorNeverTouchesIsStaleAccepted() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.begin();
    a.writeItem(7, "a-1");
    register(2, "b");
    a.commit();
    Writer b = writer(2, "b");
    b.begin();
    b.writeItem(8, "b-1");
    b.commit();

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
  }

  /**
   * The registration holds the clock (numbered, not committed) when the write reaches its last
   * statement: the write waits for the registration's commit, and is judged after it.
   */
  @Test
  void aRegistrationThatCommitsWhileTheWriteIsCommittingIsSeenByTheWrite() throws Exception {
    register(1, "a");
    Connection registering = connect();
    registering.setAutoCommit(false);
    insertRegistration(registering, 2, "b"); // holds the clock row, not committed
    Writer a = writer(1, "a");
    a.begin();
    a.append(a.readSeq() + 1, "a-1");
    CompletableFuture<Void> commit = commitAsync(a);
    assertWaits(commit, "the write's last statement waits for the registration's clock");
    registering.commit();
    commit.get(10, TimeUnit.SECONDS);

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
  }

  /**
   * The reverse: the write holds the clock (its last statement done, not committed) when the
   * registration asks for it; the registration commits after the write, which is judged before it.
   */
  @Test
  void aRegistrationThatWaitsForTheWritesClockIsNotBeforeTheWrite() throws Exception {
    register(1, "a");
    Writer a = writer(1, "a");
    a.begin();
    a.append(a.readSeq() + 1, "a-1");
    a.takeClock();
    Connection registering = connect();
    registering.setAutoCommit(false);
    CompletableFuture<Void> registration =
        CompletableFuture.runAsync(
            () -> {
              try {
                insertRegistration(registering, 2, "b");
                registering.commit();
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    assertWaits(registration, "the registration waits for the writer's clock");
    a.commitOnly();
    registration.get(10, TimeUnit.SECONDS);
    writer(2, "b").step("b-1");

    assertViolations(Map.of());
  }

  @Test
  void aWriteInAutoCommitIsClockedByItsTrigger() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.writeItem(1, "a-1"); // auto-commit: judged clean
    register(2, "b");
    a.writeItem(2, "a-2"); // auto-commit after the successor registered: stale

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
    assertThat(count("commits")).isEqualTo(2);
  }

  @Test
  void aRolledBackTransactionsKeyIsReusedAndJudgedAtTheNextCommit() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.begin();
    a.writeItem(1, "a-1");
    a.rollback(); // the session keeps its key, the logged write is gone
    a.begin();
    a.writeItem(2, "a-2");
    a.commit();

    assertViolations(Map.of());
    assertThat(count("writes")).isEqualTo(1);
  }

  @Test
  void aCommitThatSkippedTheClockIsAnUnclockedWrite() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.begin();
    a.writeItem(1, "a-1");
    a.commitOnly();

    assertViolations(Map.of("unclocked-write", 1L));
  }

  @Test
  void aWriteTheLogMissedIsAnUnloggedWrite() throws SQLException {
    register(1, "a");
    writer(1, "a").step("a-1");
    try (Statement st = admin.createStatement()) {
      st.execute("DELETE FROM " + schema + ".writes WHERE tbl = 'ledger'");
    }

    assertViolations(Map.of("unlogged-write", 1L));
  }

  @Test
  void aWriteAfterANewerRegistrationIsStaleAccepted() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    register(2, "b");
    a.step("a-2");

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
  }

  @Test
  void aTokenLowerThanThePreviousWriteIsATokenDecrease() throws SQLException {
    register(5, "a");
    writer(5, "a").step("a-1");
    register(1, "b");
    writer(1, "b").step("b-1");

    assertViolations(Map.of("token-decrease", 1L, "stale-accepted", 1L));
  }

  @Test
  void aWriteByALeaseThatIsNotTheLastRegisteredIsFlaggedEvenWithTheSameToken() throws SQLException {
    register(3, "a");
    register(3, "b");
    writer(3, "a").step("a-1");

    assertViolations(Map.of("not-registered-holder", 1L));
  }

  @Test
  void twoWritesOfOneSeqAreADuplicate() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    Writer again = writer(1, "a");
    a.begin();
    again.begin();
    a.append(1, "a-1");
    a.commit();
    again.insertLedger(1, "a-2");
    again.commit();

    assertViolations(Map.of("duplicate-seq", 1L));
  }

  @Test
  void aMissingSeqIsAGap() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.begin();
    a.append(1, "a-1");
    a.append(3, "a-2");
    a.commit();

    assertViolations(Map.of("gap", 1L));
  }

  @Test
  void aStoredSeqThatIsNotTheLedgersLastIsAMismatch() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    a.begin();
    a.storeSeq(5);
    a.commit();

    assertViolations(Map.of("seq-mismatch", 1L));
  }

  @Test
  void aRowWhoseFenceTokenIsNotItsWritersTokenIsAMismatch() throws SQLException {
    try (Statement st = admin.createStatement()) {
      st.execute("ALTER TABLE " + schema + ".items ADD COLUMN fence_token BIGINT");
    }
    register(2, "a");
    Writer a = writer(2, "a");
    a.begin();
    a.writeItem(1, "a-1");
    a.commit();
    try (Statement st = admin.createStatement()) {
      st.execute("UPDATE " + schema + ".items SET fence_token = 2 WHERE item = 1");
      st.execute(
          "INSERT INTO "
              + schema
              + ".items (resource, item, token, lease_id, attempt, fence_token)"
              + " VALUES ('r0', 2, 2, 'a', 'a-2', 1)");
    }

    assertViolations(Map.of("row-token-mismatch", 1L));
  }

  /**
   * The fence table's log: an insert and a change of holder are registrations, each on the clock;
   * an update that leaves token and lease as they were (a refused registration) is not.
   */
  @Test
  void theFenceTableLogsChangesOfHolderOnly() throws SQLException {
    String fence = DB.fenceSchemaName(suffix);
    DB.installFence(schema, fence, "guarded");
    try (Statement st = admin.createStatement()) {
      st.execute(
          "INSERT INTO " + fence + ".fence (resource, token, lease_id) VALUES ('r0', 1, 'a')");
      st.execute("UPDATE " + fence + ".fence SET token = 2, lease_id = 'b' WHERE resource = 'r0'");
      st.execute("UPDATE " + fence + ".fence SET token = 2, lease_id = 'b' WHERE resource = 'r0'");
      st.execute(
          "UPDATE "
              + fence
              + ".fence SET registered_at = CURRENT_TIMESTAMP(6) + INTERVAL 1 SECOND"
              + " WHERE resource = 'r0'");
    }
    List<String> logged = new ArrayList<>();
    try (Statement st = admin.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT token, lease_id, clock FROM " + schema + ".registrations ORDER BY id")) {
      while (rs.next()) {
        logged.add(rs.getLong(1) + "/" + rs.getString(2) + "@" + rs.getLong(3));
      }
    }
    assertThat(logged).containsExactly("1/a@1", "2/b@2");
  }

  private static CompletableFuture<Void> commitAsync(Writer w) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            w.commit();
          } catch (SQLException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  /**
   * Checks that {@code work} is still waiting after 500 ms (for the clock row: it takes a few
   * milliseconds otherwise). Not from the server's catalog: a read of {@code PROCESSLIST} or {@code
   * INNODB_TRX} sometimes blocked until a lock wait inside a stored procedure ended (seen on
   * 10.11). If the work only reached its wait later, the expected verdicts are the same: the timing
   * decides whether the interleaving under test happened, which this check reports, not the
   * verdict.
   */
  private static void assertWaits(CompletableFuture<Void> work, String what)
      throws InterruptedException {
    Thread.sleep(500);
    assertThat(work).as(what).isNotDone();
  }

  private void assertViolations(Map<String, Long> expected) throws SQLException {
    Checker.Result result = Checker.check(admin, schema, DB);
    assertThat(result.violations().keySet())
        .containsAll(expected.keySet())
        .containsAll(MariaDbChaosShortTest.RECORDER_KINDS);
    for (Map.Entry<String, Long> kind : result.violations().entrySet()) {
      assertThat(kind.getValue())
          .as("%s in %s", kind.getKey(), result.examples())
          .isEqualTo(expected.getOrDefault(kind.getKey(), 0L));
    }
  }

  private long count(String table) throws SQLException {
    try (Statement st = admin.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM " + schema + "." + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void register(long token, String lease) throws SQLException {
    insertRegistration(admin, token, lease);
  }

  private void insertRegistration(Connection c, long token, String lease) throws SQLException {
    try (PreparedStatement insert =
        c.prepareStatement(
            "INSERT INTO "
                + schema
                + ".registrations (resource, token, lease_id) VALUES (?, ?, ?)")) {
      insert.setString(1, "r0");
      insert.setLong(2, token);
      insert.setString(3, lease);
      insert.executeUpdate();
    }
  }

  private Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(DB.jdbc());
    connections.add(c);
    return c;
  }

  private Writer writer(long token, String lease) throws SQLException {
    return new Writer(connect(), token, lease);
  }

  /** One holder's session, ending its transactions as the workers do (the clock, then COMMIT). */
  private final class Writer {
    private final Connection c;
    private final long token;
    private final String lease;

    Writer(Connection c, long token, String lease) {
      this.c = c;
      this.token = token;
      this.lease = lease;
    }

    void step(String attempt) throws SQLException {
      begin();
      append(readSeq() + 1, attempt);
      commit();
    }

    void begin() throws SQLException {
      c.setAutoCommit(false);
    }

    /** The worker's end of a transaction: the commit clock as its last statement, then COMMIT. */
    void commit() throws SQLException {
      takeClock();
      commitOnly();
    }

    void takeClock() throws SQLException {
      DB.beforeCommit(c, schema);
    }

    void commitOnly() throws SQLException {
      c.commit();
      c.setAutoCommit(true);
    }

    void rollback() throws SQLException {
      c.rollback();
      c.setAutoCommit(true);
    }

    long readSeq() throws SQLException {
      try (Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery("SELECT seq FROM " + schema + ".resources WHERE resource = 'r0'")) {
        rs.next();
        return rs.getLong(1);
      }
    }

    void append(long seq, String attempt) throws SQLException {
      insertLedger(seq, attempt);
      storeSeq(seq);
    }

    void insertLedger(long seq, String attempt) throws SQLException {
      try (PreparedStatement insert =
          c.prepareStatement(
              "INSERT INTO "
                  + schema
                  + ".ledger (resource, seq, token, lease_id, worker, attempt)"
                  + " VALUES ('r0', ?, ?, ?, 0, ?)")) {
        insert.setLong(1, seq);
        insert.setLong(2, token);
        insert.setString(3, lease);
        insert.setString(4, attempt);
        insert.executeUpdate();
      }
    }

    void writeItem(int item, String attempt) throws SQLException {
      try (PreparedStatement upsert = c.prepareStatement(DB.plainItemUpsert(schema))) {
        upsert.setString(1, "r0");
        upsert.setInt(2, item);
        upsert.setLong(3, token);
        upsert.setString(4, lease);
        upsert.setString(5, attempt);
        upsert.executeUpdate();
      }
    }

    void storeSeq(long seq) throws SQLException {
      try (PreparedStatement update =
          c.prepareStatement("UPDATE " + schema + ".resources SET seq = ? WHERE resource = 'r0'")) {
        update.setLong(1, seq);
        update.executeUpdate();
      }
    }
  }
}
