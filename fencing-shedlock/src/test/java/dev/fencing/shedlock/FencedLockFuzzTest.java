package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.LeaseLostSQLException;
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
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Eight instances (threads, each with its own lease manager and provider) race for one lock name
 * for a few seconds. Most holders write and unlock at once; about one in six stalls past its short
 * {@code lockAtMostFor}, waits until a successor holds the lock, and writes again as if it still
 * held it. With fencing, no two live holders overlap, every stale write is rejected by the
 * database, and the accepted writes carry strictly increasing tokens; without, stale writes land.
 */
class FencedLockFuzzTest {

  private static final int THREADS = 8;
  private static final Duration RUN_FOR = Duration.ofSeconds(6);

  private static ShedLockFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new ShedLockFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  /** The counts of one run. */
  private static final class Run {
    final String name;
    final DataSource db;
    final String table;
    final AtomicLong newestToken = new AtomicLong();
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicInteger accepted = new AtomicInteger();
    final AtomicInteger staleRejected = new AtomicInteger();
    final AtomicInteger staleAccepted = new AtomicInteger();
    final AtomicInteger lateRejected = new AtomicInteger();
    final AtomicInteger refused = new AtomicInteger();

    Run(String name, DataSource db, String table) {
      this.name = name;
      this.db = db;
      this.table = table;
    }

    long rows() {
      return fx.queryLong("SELECT count(*) FROM " + table);
    }

    long tokensNotIncreasing() {
      return fx.queryLong(
          "SELECT count(*) FROM (SELECT token, lag(token) OVER (ORDER BY id) AS previous FROM "
              + table
              + ") t WHERE previous >= token");
    }
  }

  @Test
  void eightInstancesNeverHoldOneNameTogetherAndStaleWritesAreRejected() throws Exception {
    Run run = race(new Run("fuzz-fenced", fx.db, fx.table("log")), true);

    assertThat(run.overlaps.get()).isZero();
    assertThat(run.staleAccepted.get()).isZero();
    assertThat(run.staleRejected.get()).isPositive();
    assertThat(run.accepted.get()).isGreaterThan(THREADS);
    assertThat(run.rows()).isEqualTo(run.accepted.get());
    assertThat(run.tokensNotIncreasing()).as("accepted tokens strictly increase").isZero();
  }

  @Test
  void withoutFencingTheStaleWritesOfTheSameRaceLand() throws Exception {
    Run run = race(new Run("fuzz-unfenced", fx.pool, fx.table("plain_log")), false);

    assertThat(run.overlaps.get()).isZero();
    assertThat(run.staleAccepted.get()).as("the violation fencing prevents").isPositive();
    assertThat(run.tokensNotIncreasing()).isPositive();
  }

  private Run race(Run run, boolean fenced) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> holders = new ArrayList<>();
    long end = System.nanoTime() + RUN_FOR.toNanos();
    for (int t = 0; t < THREADS; t++) {
      LeaseManager leases = fenced ? fx.fencedLeases() : fx.leases();
      FencedLockProvider instance = new FencedLockProvider(leases, FencedLockOptions.defaults());
      Random random = new Random(t);
      holders.add(
          threads.submit(
              () -> {
                while (System.nanoTime() < end) {
                  holdOnce(run, instance, random.nextInt(6) == 0);
                }
                return null;
              }));
    }
    try {
      for (Future<?> holder : holders) {
        holder.get(60, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    System.out.printf(
        "%s: %d threads, %s: %d locks refused, %d writes accepted, %d stale writes rejected,"
            + " %d stale writes accepted, %d late writes rejected, %d overlaps%n",
        run.name,
        THREADS,
        RUN_FOR,
        run.refused.get(),
        run.accepted.get(),
        run.staleRejected.get(),
        run.staleAccepted.get(),
        run.lateRejected.get(),
        run.overlaps.get());
    return run;
  }

  private static void holdOnce(Run run, FencedLockProvider instance, boolean stall)
      throws Exception {
    Duration atMost = stall ? Duration.ofMillis(200) : Duration.ofSeconds(10);
    Optional<SimpleLock> lock =
        instance.lock(new LockConfiguration(ClockProvider.now(), run.name, atMost, Duration.ZERO));
    if (lock.isEmpty()) {
      run.refused.incrementAndGet();
      Thread.sleep(2);
      return;
    }
    try {
      Lease lease = Fencing.currentLease().orElseThrow();
      run.newestToken.accumulateAndGet(lease.token().value(), Math::max);
      if (!stall) {
        if (run.inside.incrementAndGet() != 1) {
          run.overlaps.incrementAndGet();
        }
        try {
          write(run, lease);
          run.accepted.incrementAndGet();
        } finally {
          run.inside.decrementAndGet();
        }
        return;
      }
      try {
        write(run, lease);
        run.accepted.incrementAndGet();
      } catch (StaleTokenException | LeaseLostSQLException | LeaseLostException late) {
        run.lateRejected.incrementAndGet(); // too slow even for its first write: not a fault
        return;
      }
      if (!awaitSuccessor(run, lease)) {
        return;
      }
      try {
        Fencing.run(StaleViews.believedHeld(lease), () -> write(run, lease));
        run.staleAccepted.incrementAndGet();
      } catch (StaleTokenException expected) {
        run.staleRejected.incrementAndGet();
      }
    } finally {
      lock.get().unlock();
    }
  }

  private static void write(Run run, Lease lease) throws SQLException {
    try (Connection c = run.db.getConnection();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO " + run.table + " (token) VALUES (?)")) {
      insert.setLong(1, lease.token().value());
      insert.executeUpdate();
    }
  }

  /** Waits until another holder took the lock after {@code lease}: the stale holder's moment. */
  private static boolean awaitSuccessor(Run run, Lease lease) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline) {
      if (run.newestToken.get() > lease.token().value()) {
        return true;
      }
      Thread.sleep(5);
    }
    return false;
  }
}
