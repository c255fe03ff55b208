package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A successor's registration and the stale holder's in-flight write, in both orders, step by step:
 * each side is made to wait for the other, and the wait is observed in {@code pg_stat_activity}
 * before the other side goes on. Without the fence row's share lock neither side would wait, and
 * both tests fail.
 */
class RegistrationRaceTest {

  private static final Duration WAIT_BOUND = Duration.ofSeconds(15);
  private static final LeaseRequest LEASE = FencingFixture.lease(Duration.ofSeconds(30));

  private static FencingFixture fx;
  private ExecutorService background;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @BeforeEach
  void startBackground() {
    background = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void stopBackground() {
    background.shutdownNow();
  }

  @Test
  void aRegistrationWaitsForTheStaleHoldersInFlightWriteAndThenSeesIt() throws Exception {
    fx.insertAccount(1, "nobody", 0);
    FencedLeaseManager leases = fx.fencedLeases();
    Lease stale = FencingFixture.unawareOfLoss(leases.acquire("race-write-first", LEASE));

    try (Connection inFlight = Fencing.call(stale, () -> fx.db.getConnection())) {
      inFlight.setAutoCommit(false);
      int stalePid = backendPid(inFlight);
      try (PreparedStatement update =
          GuardedStatements.update(inFlight, fx.table("accounts"), "owner = ?", "id = ?")) {
        update.setString(1, "A");
        update.setLong(2, 1);
        assertThat(update.executeUpdate()).isEqualTo(1);
      }

      fx.expireInRedis("race-write-first");
      Future<Lease> registration =
          background.submit(
              () -> leases.acquire("race-write-first", LEASE.withMaxWait(Duration.ofSeconds(10))));
      awaitBlockedBy(stalePid, "the successor's registration");
      assertThat(registration.isDone())
          .as("the registration went ahead while the stale write was in flight")
          .isFalse();

      inFlight.commit();
      try (Lease successor = registration.get(WAIT_BOUND.toSeconds(), TimeUnit.SECONDS)) {
        assertThat(fx.ownerOf(1))
            .as("the stale write committed before the registration took effect")
            .isEqualTo("A");
        assertThat(fx.guardedSetOwner(successor, 1, "B")).isEqualTo(1);
        assertThatThrownBy(() -> fx.guardedSetOwner(stale, 1, "A-again"))
            .isInstanceOf(StaleTokenException.class);
      }
      inFlight.setAutoCommit(true);
    }
    assertThat(fx.ownerOf(1)).isEqualTo("B");
  }

  @Test
  void aStaleWriteArrivingWhileARegistrationIsInFlightWaitsAndIsRejected() throws Exception {
    fx.insertAccount(2, "nobody", 0);
    FencedLeaseManager leases = fx.fencedLeases();
    Lease stale = FencingFixture.unawareOfLoss(leases.acquire("race-reg-first", LEASE));
    fx.expireInRedis("race-reg-first");
    Lease successor = fx.leases().acquire("race-reg-first", LEASE);

    try (Connection registering = DriverManager.getConnection(FencingFixture.URL)) {
      registering.setAutoCommit(false);
      int registeringPid = backendPid(registering);
      try (PreparedStatement register =
          registering.prepareStatement(
              "UPDATE "
                  + fx.fenceSchema
                  + ".fence SET token = ?, lease_id = ? WHERE resource = ? AND token < ?")) {
        register.setLong(1, successor.token().value());
        register.setString(2, successor.leaseId());
        register.setString(3, successor.resource());
        register.setLong(4, successor.token().value());
        assertThat(register.executeUpdate()).isEqualTo(1);
      }

      Future<Integer> staleWrite = background.submit(() -> fx.guardedSetOwner(stale, 2, "A"));
      awaitBlockedBy(registeringPid, "the stale write");
      assertThat(staleWrite.isDone())
          .as("the stale write went ahead while the registration was in flight")
          .isFalse();

      registering.commit();
      assertThatThrownBy(() -> staleWrite.get(WAIT_BOUND.toSeconds(), TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(StaleTokenException.class);
    }
    assertThat(fx.ownerOf(2)).isEqualTo("nobody");
    assertThat(fx.guardedSetOwner(successor, 2, "B")).isEqualTo(1);
    successor.close();
  }

  @Test
  void aStaleWriteAfterTheRegistrationCommittedIsRejectedAtOnce() throws Exception {
    fx.insertAccount(3, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("race-after");

    assertThatThrownBy(() -> fx.guardedSetOwner(holders.stale(), 3, "A"))
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(3)).isEqualTo("nobody");
    holders.current().close();
  }

  @Test
  void withoutFencingTheSameInterleavingCommitsTheStaleWriteAfterTheRegistration()
      throws Exception {
    fx.insertAccount(4, "nobody", 0);
    FencedLeaseManager leases = fx.fencedLeases();
    leases.acquire("race-control", LEASE);
    fx.expireInRedis("race-control");
    try (Lease successor = leases.acquire("race-control", LEASE)) {
      assertThat(successor.token().value()).isEqualTo(2);
      assertThat(fx.unguardedSetOwner(4, "A")).as("the stale write, unfenced").isEqualTo(1);
    }
    assertThat(fx.ownerOf(4)).isEqualTo("A");
  }

  private static int backendPid(Connection connection) throws SQLException {
    try (PreparedStatement pid = connection.prepareStatement("SELECT pg_backend_pid()");
        ResultSet row = pid.executeQuery()) {
      row.next();
      return row.getInt(1);
    }
  }

  /** Waits until some backend waits for a lock held by {@code pid}; fails after the bound. */
  private static void awaitBlockedBy(int pid, String who) throws Exception {
    long deadline = System.nanoTime() + WAIT_BOUND.toNanos();
    try (Connection observer = DriverManager.getConnection(FencingFixture.URL);
        PreparedStatement waiting =
            observer.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND ? = ANY(pg_blocking_pids(pid))")) {
      waiting.setInt(1, pid);
      while (System.nanoTime() - deadline < 0) {
        try (ResultSet row = waiting.executeQuery()) {
          row.next();
          if (row.getInt(1) > 0) {
            return;
          }
        }
        Thread.sleep(5);
      }
    }
    throw new AssertionError(
        who + " never waited for backend " + pid + " within " + WAIT_BOUND + ": nothing locks");
  }
}
