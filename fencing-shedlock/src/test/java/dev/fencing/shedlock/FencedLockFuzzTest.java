package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Eight instances (threads, each with its own lease manager and provider) race for one lock name
 * for a few seconds. Most holders write and unlock at once; about one in six stalls past its short
 * {@code lockAtMostFor}, waits until a successor has registered, and writes again as if it still
 * held the lock. No two live holders overlap, every stale write is rejected by the database, and
 * the accepted writes carry strictly increasing tokens.
 */
class FencedLockFuzzTest {

  private static final int THREADS = 8;
  private static final Duration RUN_FOR = Duration.ofSeconds(6);
  private static final String NAME = "fuzz-billing";

  private static ShedLockFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new ShedLockFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  private final AtomicInteger inside = new AtomicInteger();
  private final AtomicInteger overlaps = new AtomicInteger();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger staleRejected = new AtomicInteger();
  private final AtomicInteger staleAccepted = new AtomicInteger();
  private final AtomicInteger lateRejected = new AtomicInteger();
  private final AtomicInteger refused = new AtomicInteger();

  @Test
  void eightInstancesNeverHoldOneNameTogetherAndStaleWritesAreRejected() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> runs = new ArrayList<>();
    long end = System.nanoTime() + RUN_FOR.toNanos();
    for (int t = 0; t < THREADS; t++) {
      FencedLockProvider instance =
          new FencedLockProvider(fx.fencedLeases(), FencedLockOptions.defaults());
      Random random = new Random(t);
      runs.add(
          threads.submit(
              () -> {
                while (System.nanoTime() < end) {
                  holdOnce(instance, random.nextInt(6) == 0);
                }
                return null;
              }));
    }
    for (Future<?> run : runs) {
      run.get(60, TimeUnit.SECONDS);
    }
    threads.shutdown();

    long rows = fx.queryLong("SELECT count(*) FROM " + fx.table("log"));
    long decreasing =
        fx.queryLong(
            "SELECT count(*) FROM (SELECT token, lag(token) OVER (ORDER BY id) AS previous FROM "
                + fx.table("log")
                + ") t WHERE previous >= token");
    System.out.printf(
        "fuzz: %d threads, %s: %d locks refused, %d writes accepted, %d stale writes rejected"
            + " by the database, %d late writes rejected, %d overlaps, %d stale writes accepted%n",
        THREADS,
        RUN_FOR,
        refused.get(),
        accepted.get(),
        staleRejected.get(),
        lateRejected.get(),
        overlaps.get(),
        staleAccepted.get());
    assertThat(overlaps.get()).isZero();
    assertThat(staleAccepted.get()).isZero();
    assertThat(staleRejected.get()).isPositive();
    assertThat(accepted.get()).isGreaterThan(THREADS);
    assertThat(rows).isEqualTo(accepted.get());
    assertThat(decreasing).as("accepted tokens strictly increase").isZero();
  }

  private void holdOnce(FencedLockProvider instance, boolean stall) throws Exception {
    Duration atMost = stall ? Duration.ofMillis(200) : Duration.ofSeconds(10);
    Optional<SimpleLock> lock =
        instance.lock(new LockConfiguration(ClockProvider.now(), NAME, atMost, Duration.ZERO));
    if (lock.isEmpty()) {
      refused.incrementAndGet();
      Thread.sleep(2);
      return;
    }
    try {
      Lease lease = Fencing.currentLease().orElseThrow();
      if (!stall) {
        if (inside.incrementAndGet() != 1) {
          overlaps.incrementAndGet();
        }
        try {
          write(lease);
          accepted.incrementAndGet();
        } finally {
          inside.decrementAndGet();
        }
        return;
      }
      try {
        write(lease);
        accepted.incrementAndGet();
      } catch (StaleTokenException late) {
        lateRejected.incrementAndGet(); // too slow even for its first write: refused, not a fault
        return;
      }
      if (!awaitSuccessor(lease)) {
        return;
      }
      try {
        Fencing.run(StaleViews.believedHeld(lease), () -> write(lease));
        staleAccepted.incrementAndGet();
      } catch (StaleTokenException expected) {
        staleRejected.incrementAndGet();
      }
    } finally {
      lock.get().unlock();
    }
  }

  private static void write(Lease lease) throws SQLException {
    try (Connection c = fx.db.getConnection();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO " + fx.table("log") + " (token) VALUES (?)")) {
      insert.setLong(1, lease.token().value());
      insert.executeUpdate();
    }
  }

  /** Waits until another holder registered after {@code lease}: the stale holder's moment. */
  private static boolean awaitSuccessor(Lease lease) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline) {
      if (fx.db.fence().currentToken(lease.resource()).orElse(0) > lease.token().value()) {
        return true;
      }
      Thread.sleep(5);
    }
    return false;
  }
}
