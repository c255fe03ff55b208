package dev.fencing.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseManagerClosedException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The lease lifecycle on the in-memory store, on a fake clock: deterministic, no Redis. */
class LeaseLifecycleTest {

  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final AtomicLong now = new AtomicLong(1_000_000 * MS);
  private final Ticker ticker = now::get;
  private final InMemoryLeaseStore store = new InMemoryLeaseStore(ticker);
  private final List<String> losses = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger renewals = new AtomicInteger();
  private final LeaseObserver observer =
      new LeaseObserver() {
        @Override
        public void onRenewed(Lease lease) {
          renewals.incrementAndGet();
        }
      };
  private final LeaseLifecycle leases =
      LeaseLifecycle.manual(store, LeaseOptions.defaults(), observer, ticker, Runnable::run);

  private void advance(long nanos) {
    now.addAndGet(nanos);
    leases.sweep();
  }

  private Lease acquire(String resource, LeaseRequest request) {
    Lease lease = leases.acquire(resource, request);
    lease.onLoss((lost, reason) -> losses.add(lost.resource() + ":" + reason));
    return lease;
  }

  @Test
  void aLeaseWhoseRenewalsFailIsLostExactlyAtItsDeadlineBeforeTheServerExpiresIt() {
    Lease lease = acquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));
    store.setDown(true);

    advance(2700 * MS - 1); // renewals at 1000 ms and retries every 500 ms all fail

    assertThat(lease.isHeld()).isTrue();
    assertThat(losses).isEmpty();

    now.addAndGet(1);
    assertThat(lease.isHeld()).as("not held at the deadline, even before a sweep").isFalse();
    leases.sweep();

    assertThat(losses).containsExactly("job:RENEWAL_TIMEOUT");
    assertThat(store.isLocked("job")).as("the server still has the lock: loss came first").isTrue();
    advance(300 * MS);
    assertThat(store.isLocked("job")).isFalse();
    assertThat(losses).hasSize(1);
  }

  @Test
  void aRenewalWhoseAnswerIsLostIsSentAgainInsideTheLease() {
    Lease lease = acquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));
    store.loseRenewalReplies(1);

    advance(1000 * MS); // first renewal: applied, but the answer never comes
    assertThat(renewals.get()).isZero();
    advance(500 * MS); // sent again while the first is still in flight
    assertThat(renewals.get()).isEqualTo(1);
    advance(1500 * MS); // past the first deadline (2700 ms)

    assertThat(lease.isHeld()).isTrue();
    assertThat(losses).isEmpty();
  }

  @Test
  void aListenerThatThrowsAnyThrowableStopsNeitherTheSweepNorOtherListeners() {
    Lease first = acquire("first", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));
    first.onLoss(
        (lease, reason) -> {
          throw new AssertionError("an Error from a listener");
        });
    first.onLoss(
        (lease, reason) -> {
          throw new OutOfMemoryError("even this");
        });
    AtomicInteger after = new AtomicInteger();
    first.onLoss((lease, reason) -> after.incrementAndGet());
    Lease second = acquire("second", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));

    store.breakLock("first");
    advance(1000 * MS); // the renewal finds the lock gone

    assertThat(losses).containsExactly("first:TAKEN_OVER");
    assertThat(after.get()).isEqualTo(1);
    for (int i = 0; i < 10; i++) {
      advance(1000 * MS);
    }
    assertThat(second.isHeld()).as("renewed after the throwing listeners").isTrue();
    assertThat(losses).hasSize(1);
  }

  @Test
  void aNonRenewingLeaseIsNeverRenewedAndEndsExactlyAtItsDeadline() {
    Lease lease =
        acquire("once", LeaseRequest.forLeaseTime(Duration.ofSeconds(1)).withoutRenewal());

    advance(900 * MS - 1);
    assertThat(lease.isHeld()).isTrue();
    assertThat(renewals.get()).isZero();

    advance(1);
    assertThat(losses).containsExactly("once:EXPIRED");
    assertThat(store.isLocked("once")).as("its own lock is deleted at once").isFalse();
  }

  @Test
  void closingTheManagerReportsEveryHeldLeaseLostOnceAndLeavesTheLocksToExpire() {
    Lease first = acquire("first", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));
    Lease second = acquire("second", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));
    acquire("released", LeaseRequest.forLeaseTime(Duration.ofSeconds(3))).close();

    leases.close();
    leases.close();

    assertThat(losses).containsExactlyInAnyOrder("first:MANAGER_CLOSED", "second:MANAGER_CLOSED");
    assertThat(first.isHeld()).isFalse();
    assertThat(second.lossReason()).hasValue(LossReason.MANAGER_CLOSED);
    assertThat(store.isLocked("first")).isTrue();
    assertThat(leases.heldCount()).isZero();
    assertThatThrownBy(
            () -> leases.acquire("third", LeaseRequest.forLeaseTime(Duration.ofSeconds(3))))
        .isInstanceOf(LeaseManagerClosedException.class)
        .hasMessageContaining("closed");
    now.addAndGet(3000 * MS);
    assertThat(store.isLocked("first")).isFalse();
  }

  @Test
  void markLostIsImmediateIdempotentAndStopsRenewals() {
    Lease lease = acquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(3)));

    lease.markLost(LossReason.SUPERSEDED);
    lease.markLost(LossReason.TAKEN_OVER);

    assertThat(lease.isHeld()).isFalse();
    assertThat(losses).containsExactly("job:SUPERSEDED");
    assertThat(store.isLocked("job")).isFalse();
    advance(1000 * MS);
    assertThat(renewals.get()).isZero();
    assertThat(leases.heldCount()).isZero();
  }

  @Test
  void aSubscriptionConfirmedAfterTheWaiterGaveUpIsCancelled() {
    LeaseLifecycle waiter =
        LeaseLifecycle.manual(
            store,
            LeaseOptions.defaults().withOperationTimeout(Duration.ofMillis(100)),
            LeaseObserver.NONE,
            ticker,
            Runnable::run);
    acquire("busy", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
    store.delaySubscriptions(true);

    assertThatThrownBy(
            () ->
                waiter.acquire(
                    "busy",
                    LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
                        .withMaxWait(Duration.ofSeconds(10))))
        .isInstanceOf(LeaseBackendException.class)
        .hasMessageContaining("did not answer");
    assertThat(store.subscriptions("busy")).isEqualTo(1);

    store.confirmDelayedSubscriptions();

    assertThat(store.subscriptions("busy")).as("no listener left behind").isZero();
  }

  @Test
  void listenersRunOffTheHeartbeatThread() throws Exception {
    InMemoryLeaseStore realTime = new InMemoryLeaseStore(Ticker.SYSTEM);
    try (LeaseLifecycle running =
        LeaseLifecycle.start(realTime, LeaseOptions.defaults(), LeaseObserver.NONE)) {
      Lease lease = running.acquire("job", LeaseRequest.forLeaseTime(Duration.ofMillis(300)));
      AtomicReference<String> thread = new AtomicReference<>();
      CountDownLatch lost = new CountDownLatch(1);
      lease.onLoss(
          (l, reason) -> {
            thread.set(Thread.currentThread().getName());
            lost.countDown();
          });
      realTime.breakLock("job");
      assertThat(lost.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(thread.get()).isEqualTo("fencing-lease-events");
    }
  }

  @Test
  void closingTheManagerEndsAWaitingAcquisitionAtOnce() throws Exception {
    InMemoryLeaseStore realTime = new InMemoryLeaseStore(Ticker.SYSTEM);
    LeaseLifecycle holder =
        LeaseLifecycle.start(realTime, LeaseOptions.defaults(), LeaseObserver.NONE);
    LeaseLifecycle waiting =
        LeaseLifecycle.start(realTime, LeaseOptions.defaults(), LeaseObserver.NONE);
    try {
      holder.acquire("busy", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
      CompletableFuture<Lease> waiter =
          CompletableFuture.supplyAsync(
              () ->
                  waiting.acquire(
                      "busy",
                      LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
                          .withMaxWait(Duration.ofSeconds(30))));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (realTime.subscriptions("busy") == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5); // polls until the waiter is subscribed
      }
      assertThat(realTime.subscriptions("busy")).isEqualTo(1);

      waiting.close();

      assertThatThrownBy(() -> waiter.get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(LeaseManagerClosedException.class);
    } finally {
      holder.close();
      waiting.close();
    }
  }
}
