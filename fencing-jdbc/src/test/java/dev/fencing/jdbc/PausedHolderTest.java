package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.RedisLeaseManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A holder frozen inside an open transaction holds the fence row's share lock; its successor's
 * registration must not wait for it much longer than one lease time.
 */
class PausedHolderTest {

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
    aProcess.close(); // A freezes: no commit, no heartbeat, the transaction stays open

    FencedLeaseManager b = fx.fencedLeases();
    long start = System.nanoTime();
    try (Lease successor =
        b.acquire(
            "frozen",
            FencingFixture.lease(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(20)))) {
      Duration waited = Duration.ofNanos(System.nanoTime() - start);
      System.out.printf(
          "[paused holder] successor registered %d ms after it started waiting (lease time %d"
              + " ms)%n",
          waited.toMillis(), leaseTime.toMillis());
      assertThat(waited).isLessThan(leaseTime.multipliedBy(3));
      assertThat(fx.guardedSetOwner(successor, 1, "B")).isEqualTo(1);
    }

    assertThatThrownBy(frozen::commit)
        .as("the frozen transaction was ended by idle_in_transaction_session_timeout")
        .isInstanceOf(SQLException.class);
    assertThat(fx.ownerOf(1)).isEqualTo("B");
    frozen.close();
  }
}
