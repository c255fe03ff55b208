package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * When the database refuses a write because a newer holder registered, the lease is lost at that
 * moment: {@code isHeld()} turns false and the listeners fire once, without waiting for the
 * heartbeat (a 30 s lease renews every 10 s) to find the lock gone.
 */
class RejectionMarksTheLeaseLostTest {

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
  void aRefusedWriteMarksTheLeaseLostAtOnceAndTellsTheListenersAndTheObserverOnce()
      throws Exception {
    fx.insertAccount(1, "nobody", 0);
    FencedLeaseManager leases = fx.fencedLeases();
    Lease stale = leases.acquire("superseded", FencingFixture.lease(Duration.ofSeconds(30)));
    List<LossReason> losses = new CopyOnWriteArrayList<>();
    CountDownLatch told = new CountDownLatch(1);
    stale.onLoss(
        (lease, reason) -> {
          losses.add(reason);
          told.countDown();
        });
    List<StaleTokenException> observed = new CopyOnWriteArrayList<>();
    FencedDataSource observedDb =
        FencedDataSource.wrap(
            fx.pool,
            fx.db.options(),
            new FenceObserver() {
              @Override
              public void onWriteRejected(StaleTokenException rejection) {
                observed.add(rejection);
              }
            });

    fx.expireInRedis("superseded");
    try (Lease successor =
        leases.acquire("superseded", FencingFixture.lease(Duration.ofSeconds(30)))) {
      assertThat(stale.isHeld()).as("the heartbeat has not noticed yet").isTrue();

      assertThatThrownBy(() -> fx.guardedSetOwner(observedDb, stale, 1, "A"))
          .isInstanceOfSatisfying(
              StaleTokenException.class,
              e -> assertThat(e.reason()).isEqualTo(StaleTokenException.Reason.SUPERSEDED));

      assertThat(stale.isHeld()).as("lost when the database said so").isFalse();
      assertThat(stale.lossReason()).contains(LossReason.SUPERSEDED);
      assertThat(told.await(5, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> fx.guardedSetOwner(observedDb, stale, 1, "A"))
          .as("the next write fails fast, before any round trip")
          .isInstanceOf(LeaseLostException.class);
      assertThat(fx.guardedSetOwner(successor, 1, "B")).isEqualTo(1);
    }
    assertThat(losses).containsExactly(LossReason.SUPERSEDED);
    assertThat(observed).hasSize(1);
    assertThat(fx.ownerOf(1)).isEqualTo("B");
  }
}
