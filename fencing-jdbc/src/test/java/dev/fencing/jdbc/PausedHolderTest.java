package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.RedisLeaseManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A holder frozen inside an open transaction holds the fence row's share lock; its successor's
 * registration waits for it (its write might still commit), but not much longer than one lease
 * time.
 */
class PausedHolderTest {

  /**
   * The idle timer starts when the server answered the write, a moment before the client saw it.
   */
  private static final Duration EARLY_TOLERANCE = Duration.ofMillis(100);

  private static final String IDLE_IN_TRANSACTION_TIMEOUT = "25P03";
  private static final String CONNECTION_FAILURE = "08006";

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @Test
  void aHolderFrozenInsideATransactionDoesNotBlockItsSuccessorBeyondAboutOneLeaseTime()
      throws Exception {
    fx.insertAccount(1, "nobody", 0);
    Duration leaseTime = Duration.ofSeconds(2);
    RedisLeaseManager aProcess = fx.leases();
    Lease a =
        new FencedLeaseManager(aProcess, fx.db.fence())
            .acquire("frozen", FencingFixture.lease(leaseTime));

    Connection frozen = Fencing.call(a, () -> fx.db.getConnection());
    frozen.setAutoCommit(false);
    try (PreparedStatement update =
        GuardedStatements.update(frozen, fx.table("accounts"), "owner = ?", "id = ?")) {
      update.setString(1, "A");
      update.setLong(2, 1);
      assertThat(update.executeUpdate()).isEqualTo(1);
    }
    long frozeAt = System.nanoTime();
    Instant idleSince = idleInTransactionSince(frozen);
    aProcess.close(); // A freezes: no commit, no heartbeat, the transaction stays open
    fx.expireInRedis("frozen"); // its lock is gone at once: only the fence can hold B back

    FencedLeaseManager b = fx.fencedLeases();
    try (Lease successor =
        b.acquire(
            "frozen",
            FencingFixture.lease(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(20)))) {
      Duration waited = Duration.ofNanos(System.nanoTime() - frozeAt);
      Duration sinceIdle = Duration.between(idleSince, serverNow());
      System.out.printf(
          "[paused holder] successor registered %d ms after the holder froze, %d ms after its"
              + " transaction went idle (lease time %d ms)%n",
          waited.toMillis(), sinceIdle.toMillis(), leaseTime.toMillis());
      assertThat(sinceIdle)
          .as("the registration must wait for the frozen transaction's share lock")
          .isGreaterThanOrEqualTo(leaseTime);
      assertThat(waited).isLessThan(leaseTime.multipliedBy(3));
      assertThat(fx.guardedSetOwner(successor, 1, "B")).isEqualTo(1);
    }

    assertThatThrownBy(frozen::commit)
        .as("the frozen transaction was ended by idle_in_transaction_session_timeout")
        .isInstanceOfSatisfying(
            SQLException.class,
            e ->
                assertThat(e.getSQLState())
                    .as("SQLState of %s", e)
                    .isIn(IDLE_IN_TRANSACTION_TIMEOUT, CONNECTION_FAILURE));
    assertThat(fx.ownerOf(1)).isEqualTo("B");
    frozen.close();
  }

  /** When the server saw the frozen session go idle in its transaction (its own clock). */
  private static Instant idleInTransactionSince(Connection frozen) throws SQLException {
    int pid;
    try (PreparedStatement read = frozen.prepareStatement("SELECT pg_backend_pid()");
        ResultSet row = read.executeQuery()) {
      row.next();
      pid = row.getInt(1);
    }
    try (Connection observer = DriverManager.getConnection(FencingFixture.URL);
        PreparedStatement read =
            observer.prepareStatement(
                "SELECT state_change FROM pg_stat_activity"
                    + " WHERE pid = ? AND state = 'idle in transaction'")) {
      read.setInt(1, pid);
      try (ResultSet row = read.executeQuery()) {
        assertThat(row.next()).as("backend %d is idle in its transaction", pid).isTrue();
        return row.getObject(1, OffsetDateTime.class).toInstant();
      }
    }
  }

  private static Instant serverNow() throws SQLException {
    try (Connection observer = DriverManager.getConnection(FencingFixture.URL);
        PreparedStatement read = observer.prepareStatement("SELECT clock_timestamp()");
        ResultSet row = read.executeQuery()) {
      row.next();
      return row.getObject(1, OffsetDateTime.class).toInstant();
    }
  }
}
