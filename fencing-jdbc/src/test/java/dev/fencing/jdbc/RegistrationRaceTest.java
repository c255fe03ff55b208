package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A successor's registration racing the stale holder's in-flight write, with randomized timing:
 * either the stale write commits before the registration takes effect (and the successor sees it),
 * or it is rejected. Never both a registration and a later stale commit.
 */
class RegistrationRaceTest {

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
  void aRegistrationNeverInterleavesWithAStaleInFlightWrite() throws Exception {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    ExecutorService staleThread = Executors.newSingleThreadExecutor();
    int staleCommitted = 0;
    int staleRejected = 0;
    try {
      for (int i = 0; i < 40; i++) {
        String resource = "race-" + i;
        String mark = "A-" + i;
        fx.insertAccount(i, "nobody", 0);
        FencedLeaseManager leases = fx.fencedLeases();
        Lease a =
            FencingFixture.unawareOfLoss(
                leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30))));
        int beforeWrite = random.nextInt(15);
        int beforeCommit = random.nextInt(15);
        int beforeTakeover = random.nextInt(20);
        long id = i;
        Future<Boolean> staleWrite =
            staleThread.submit(() -> writeInTransaction(a, id, mark, beforeWrite, beforeCommit));

        Thread.sleep(beforeTakeover);
        fx.expireInRedis(resource);
        Lease b =
            leases.acquire(
                resource,
                FencingFixture.lease(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(10)));
        String seenAfterRegistration = fx.ownerOf(id);
        boolean committed = staleWrite.get(30, TimeUnit.SECONDS);
        b.close();

        if (committed) {
          staleCommitted++;
          assertThat(seenAfterRegistration)
              .as("seed %d, round %d: the stale write committed after the registration", seed, i)
              .isEqualTo(mark);
        } else {
          staleRejected++;
          assertThat(fx.ownerOf(id)).as("seed %d, round %d", seed, i).isEqualTo("nobody");
        }
      }
    } finally {
      staleThread.shutdownNow();
    }
    System.out.printf(
        "[registration race] seed %d: stale write committed first %d times, rejected %d times%n",
        seed, staleCommitted, staleRejected);
    assertThat(staleCommitted + staleRejected).isEqualTo(40);
  }

  private static boolean writeInTransaction(
      Lease lease, long id, String owner, int beforeWrite, int beforeCommit) throws Exception {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement update =
                GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?")) {
              Thread.sleep(beforeWrite);
              update.setString(1, owner);
              update.setLong(2, id);
              update.executeUpdate();
              Thread.sleep(beforeCommit);
              c.commit();
              return true;
            } catch (StaleTokenException rejected) {
              c.rollback();
              return false;
            } catch (SQLException e) {
              c.rollback();
              throw e;
            } finally {
              c.setAutoCommit(true);
            }
          }
        });
  }
}
