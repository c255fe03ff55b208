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
 * The checker over planted histories: each test writes a history by hand, through the same tables
 * and triggers as a chaos run, with one kind of violation (or none), and checks that the checker
 * reports exactly that.
 */
class CheckerTest {

  private final List<Connection> connections = new ArrayList<>();
  private String schema;
  private Connection admin;

  @BeforeEach
  void createSchema() throws SQLException {
    schema = "itc_" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
    admin = connect();
    ChaosSchema.create(admin, schema, 1);
  }

  @AfterEach
  void dropSchema() throws SQLException {
    for (Connection c : connections) {
      c.close();
    }
    try (Connection c = DriverManager.getConnection(ChaosRun.JDBC);
        Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void aCleanHistoryHasNoViolation() throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    a.step("a-2");
    register(2, "b");
    Writer b = writer(2, "b");
    b.step("b-1");
    register(3, "c");
    writer(3, "c").step("c-1");

    assertViolations(Map.of());
  }

  @Test
  void aStaleWriteThatRanBeforeTheSuccessorRegisteredAndCommittedAfterIsStaleAccepted()
      throws SQLException {
    register(1, "a");
    Writer a = writer(1, "a");
    a.step("a-1");
    a.begin();
    long seq = a.readSeq();
    a.append(seq + 1, "a-2"); // runs while lease a is still the registered one
    register(2, "b"); // the successor registers and commits
    a.commit(); // the stale transaction commits after it
    Writer b = writer(2, "b");
    b.step("b-1"); // reads seq after the stale commit and builds on it: no duplicate, no gap

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

  @Test
  void aRegistrationThatCommitsWhileTheWriteIsCommittingIsSeenByTheWrite() throws Exception {
    register(1, "a");
    Connection registering = connect();
    registering.setAutoCommit(false);
    try (PreparedStatement insert =
        registering.prepareStatement(
            "INSERT INTO "
                + schema
                + ".registrations (resource, token, lease_id) VALUES (?, ?, ?)")) {
      insert.setString(1, "r0");
      insert.setLong(2, 2);
      insert.setString(3, "b");
      insert.executeUpdate(); // numbered, holds the clock row, not committed
    }
    Writer a = writer(1, "a");
    a.begin();
    a.append(a.readSeq() + 1, "a-1");
    long pid = a.pid();
    CompletableFuture<Void> commit =
        CompletableFuture.runAsync(
            () -> {
              try {
                a.commit();
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    awaitLockWaitOrDone(pid, commit);
    registering.commit();
    commit.get(10, TimeUnit.SECONDS);

    assertViolations(Map.of("stale-accepted", 1L, "not-registered-holder", 1L));
  }

  @Test
  void aRowWhoseFenceTokenIsNotItsWritersTokenIsAMismatch() throws SQLException {
    try (Statement st = admin.createStatement()) {
      st.execute("ALTER TABLE " + schema + ".items ADD COLUMN fence_token bigint");
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
   * Waits until the committing write waits for a lock, or has committed without waiting (which the
   * checker must then catch: the assertion on the violations fails).
   */
  private void awaitLockWaitOrDone(long pid, CompletableFuture<Void> commit)
      throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline && !commit.isDone()) {
      try (PreparedStatement q =
          admin.prepareStatement(
              "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'")) {
        q.setLong(1, pid);
        try (ResultSet rs = q.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      Thread.sleep(5);
    }
    assertThat(commit).as("the write's commit neither waited nor finished").isDone();
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
    // Redis handed out a lower token after losing its counter, and nothing refused it.
    register(5, "a");
    writer(5, "a").step("a-1");
    register(1, "b");
    writer(1, "b").step("b-1");

    assertViolations(Map.of("token-decrease", 1L, "stale-accepted", 1L));
  }

  @Test
  void aWriteByALeaseThatIsNotTheLastRegisteredIsFlaggedEvenWithTheSameToken() throws SQLException {
    // Two holders with one token, as after a fail-over.
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

  private void assertViolations(Map<String, Long> expected) throws SQLException {
    Checker.Result result = Checker.check(admin, schema);
    assertThat(result.violations().keySet()).containsAll(expected.keySet());
    for (Map.Entry<String, Long> kind : result.violations().entrySet()) {
      assertThat(kind.getValue())
          .as("%s in %s", kind.getKey(), result.examples())
          .isEqualTo(expected.getOrDefault(kind.getKey(), 0L));
    }
  }

  private void register(long token, String lease) throws SQLException {
    try (PreparedStatement insert =
        admin.prepareStatement(
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
    Connection c = DriverManager.getConnection(ChaosRun.JDBC);
    connections.add(c);
    return c;
  }

  private Writer writer(long token, String lease) throws SQLException {
    return new Writer(connect(), token, lease);
  }

  /** One holder's session: ledger steps as the workers write them, or split up by the test. */
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

    void commit() throws SQLException {
      c.commit();
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
      try (PreparedStatement upsert =
          c.prepareStatement(
              "INSERT INTO "
                  + schema
                  + ".items (resource, item, token, lease_id, attempt) VALUES ('r0', ?, ?, ?, ?)"
                  + " ON CONFLICT (resource, item) DO UPDATE SET token = EXCLUDED.token,"
                  + " lease_id = EXCLUDED.lease_id, attempt = EXCLUDED.attempt")) {
        upsert.setInt(1, item);
        upsert.setLong(2, token);
        upsert.setString(3, lease);
        upsert.setString(4, attempt);
        upsert.executeUpdate();
      }
    }

    long pid() throws SQLException {
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        return rs.getLong(1);
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
