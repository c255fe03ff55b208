package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.RedisLeaseManager;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The incident's last gap: holder A stalls past its lease time between its last heartbeat and its
 * next write, B takes over and writes, A wakes up and writes. A is a real thread, frozen on a latch
 * with its heartbeat stopped; its lease really expires in Redis before B acquires.
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class StaleWriterTest {

  private FencingFixture fx;
  private ExecutorService threads;

  /** The database the suite runs on; {@link MariaDbStaleWriterTest} runs it on MariaDB. */
  FencingFixture newFixture() {
    return new FencingFixture();
  }

  @BeforeAll
  void setUp() {
    fx = newFixture();
  }

  @AfterAll
  void tearDown() {
    fx.close();
  }

  @org.junit.jupiter.api.BeforeEach
  void startThreads() {
    threads = Executors.newCachedThreadPool();
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  /** What the stale holder does once it wakes up. */
  private interface StaleWrite {
    int write(Lease staleView) throws Exception;
  }

  /** What the successor does once it holds the lease. */
  private interface SuccessorWrite {
    void write(Lease lease) throws Exception;
  }

  /**
   * Runs the scenario: A acquires and registers, freezes (thread and heartbeat) long enough for its
   * lease to expire in Redis, B acquires, registers and writes, then A resumes and writes.
   */
  private Future<Integer> staleHolderScenario(
      String resource, SuccessorWrite successor, StaleWrite stale) throws Exception {
    RedisLeaseManager aProcess = fx.leases();
    FencedLeaseManager a = new FencedLeaseManager(aProcess, fx.db.fence());
    FencedLeaseManager b = fx.fencedLeases();
    Lease leaseA =
        a.acquire(
            resource,
            FencingFixture.lease(Duration.ofMillis(400)).withMaxWait(Duration.ofSeconds(2)));
    Lease viewOfA = FencingFixture.unawareOfLoss(leaseA);
    CountDownLatch resume = new CountDownLatch(1);
    Future<Integer> aWrite =
        threads.submit(
            () -> {
              resume.await(); // the GC pause
              return stale.write(viewOfA);
            });
    aProcess.close(); // the paused process renews nothing
    try (Lease leaseB =
        b.acquire(
            resource,
            FencingFixture.lease(Duration.ofSeconds(10)).withMaxWait(Duration.ofSeconds(5)))) {
      assertThat(leaseB.token()).isGreaterThan(leaseA.token());
      successor.write(leaseB);
      resume.countDown();
      awaitDone(aWrite);
    }
    return aWrite;
  }

  private static void awaitDone(Future<?> future) throws Exception {
    try {
      future.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException expectedForRejectedWrites) {
      // the caller inspects the outcome
    }
  }

  @Test
  void shouldRejectAStaleWriteToARowTheSuccessorWrote() throws Exception {
    fx.insertAccount(1, "nobody", 0);
    Future<Integer> a =
        staleHolderScenario(
            "accounts-1",
            b -> assertThat(fx.guardedSetOwner(b, 1, "B")).isEqualTo(1),
            staleA -> fx.guardedSetOwner(staleA, 1, "A"));

    assertThatThrownBy(a::get)
        .cause()
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.resource()).isEqualTo("accounts-1");
              assertThat(e.currentToken()).isGreaterThan(e.attemptedToken());
              assertThat(e.getSQLState()).isEqualTo("ZF001");
            });
    assertThat(fx.ownerOf(1)).isEqualTo("B");
  }

  @Test
  void shouldRejectAStaleWriteToARowTheSuccessorNeverTouched() throws Exception {
    fx.insertAccount(2, "nobody", 0);
    fx.insertAccount(3, "nobody", 0);
    Future<Integer> a =
        staleHolderScenario(
            "accounts-2",
            b -> assertThat(fx.guardedSetOwner(b, 2, "B")).isEqualTo(1),
            staleA -> fx.guardedSetOwner(staleA, 3, "A"));

    assertThatThrownBy(a::get).cause().isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(2)).isEqualTo("B");
    assertThat(fx.ownerOf(3)).isEqualTo("nobody");
  }

  @Test
  void withFencingOffTheStaleWriteOverwritesTheSuccessorsRow() throws Exception {
    fx.insertAccount(4, "nobody", 0);
    Future<Integer> a =
        staleHolderScenario(
            "accounts-4",
            b -> fx.unguardedSetOwner(4, "B"),
            staleA -> fx.unguardedSetOwner(4, "A"));

    assertThat(a.get()).isEqualTo(1);
    assertThat(fx.ownerOf(4)).as("the violation the fence prevents").isEqualTo("A");
  }

  @Test
  void withFencingOffTheStaleWriteLandsOnARowTheSuccessorNeverTouched() throws Exception {
    fx.insertAccount(5, "nobody", 0);
    fx.insertAccount(6, "nobody", 0);
    Future<Integer> a =
        staleHolderScenario(
            "accounts-5",
            b -> fx.unguardedSetOwner(5, "B"),
            staleA -> fx.unguardedSetOwner(6, "A"));

    assertThat(a.get()).isEqualTo(1);
    assertThat(fx.ownerOf(6)).isEqualTo("A");
  }

  @Test
  void withTheRowGuardAloneTheStaleWriteLandsOnARowTheSuccessorNeverTouched() throws Exception {
    // Why the resource fence exists: the row guard alone does not stop a double write.
    fx.insertAccount(7, "nobody", 0);
    fx.insertAccount(8, "nobody", 0);
    Future<Integer> a =
        staleHolderScenario(
            "accounts-7",
            b -> fx.guardedSetOwner(b, 7, "B"),
            staleA -> {
              try (var c = fx.pool.getConnection();
                  var update =
                      c.prepareStatement(
                          "UPDATE "
                              + fx.table("accounts")
                              + " SET owner = ?, fence_token = ? WHERE id = ? AND fence_token <= ?")) {
                update.setString(1, "A");
                update.setLong(2, staleA.token().value());
                update.setLong(3, 8);
                update.setLong(4, staleA.token().value());
                return update.executeUpdate();
              }
            });

    assertThat(a.get()).isEqualTo(1);
    assertThat(fx.ownerOf(8)).isEqualTo("A");
  }

  @Test
  void shouldFailFastWithoutARoundTripWhenTheLeaseIsKnownLost() throws Exception {
    fx.insertAccount(9, "nobody", 0);
    RedisLeaseManager aProcess = fx.leases();
    Lease lease =
        new FencedLeaseManager(aProcess, fx.db.fence())
            .acquire("accounts-9", FencingFixture.lease(Duration.ofMillis(300)));
    java.sql.Connection fenced =
        Fencing.call(lease, () -> fx.db.getConnection()); // taken while held
    fx.expireInRedis("accounts-9");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    while (lease.isHeld() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(lease.isHeld()).isFalse();
    long pid = fx.sessionId(fenced);
    String lastSeen = fx.lastStatementSeenBy(pid);
    assertThatThrownBy(
            () -> GuardedStatements.update(fenced, fx.table("accounts"), "owner = ?", "id = ?"))
        .as("inside a JDBC call, the JVM's knowledge is an SQLException")
        .isInstanceOf(LeaseLostSQLException.class)
        .hasCauseInstanceOf(dev.fencing.core.LeaseLostException.class)
        .hasMessageContaining("no longer held");
    assertThatThrownBy(() -> fenced.prepareStatement("SELECT 1"))
        .isInstanceOf(LeaseLostSQLException.class);
    assertThat(fx.lastStatementSeenBy(pid))
        .as("the server saw nothing from the connection after the lease was known lost")
        .isEqualTo(lastSeen);
    fenced.close();
    assertThatThrownBy(() -> Fencing.run(lease, () -> {}))
        .isInstanceOf(dev.fencing.core.LeaseLostException.class);
    assertThat(fx.ownerOf(9)).isEqualTo("nobody");
  }
}
