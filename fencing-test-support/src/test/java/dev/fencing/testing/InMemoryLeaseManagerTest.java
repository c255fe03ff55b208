package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseBackendException;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The test controls of {@link InMemoryLeaseManager} and its settable clock. */
class InMemoryLeaseManagerTest {

  private static final LeaseRequest THIRTY_SECONDS =
      LeaseRequest.forLeaseTime(Duration.ofSeconds(30));

  private final SettableClock clock = SettableClock.create();
  private final InMemoryLeaseManager leases = InMemoryLeaseManager.create(clock);

  @AfterEach
  void close() {
    leases.close();
  }

  @Test
  void expireNowLetsASuccessorInWhileThePausedHolderStillBelievesItHoldsTheLease() {
    Lease paused = leases.acquire("job", THIRTY_SECONDS.withoutRenewal());
    assertThat(leases.tryAcquire("job", THIRTY_SECONDS)).isEmpty();

    leases.expireNow("job");
    Lease successor = leases.tryAcquire("job", THIRTY_SECONDS).orElseThrow();

    assertThat(successor.token().isNewerThan(paused.token())).isTrue();
    assertThat(paused.isHeld()).isTrue();
    successor.close();
  }

  @Test
  void aRenewingHolderLearnsOfTheExpiryAtItsNextRenewal() throws Exception {
    Lease holder = leases.acquire("job", THIRTY_SECONDS);
    CompletableFuture<LossReason> lost = new CompletableFuture<>();
    holder.onLoss((lease, reason) -> lost.complete(reason));
    leases.expireNow("job");

    clock.advance(Duration.ofSeconds(11)); // past the renewal interval of 10 s

    assertThat(lost.get(10, TimeUnit.SECONDS)).isEqualTo(LossReason.TAKEN_OVER);
    assertThat(holder.isHeld()).isFalse();
  }

  @Test
  void advancingTheClockPastALeaseTimeEndsANonRenewingLease() throws Exception {
    Lease lease = leases.acquire("job", THIRTY_SECONDS.withoutRenewal());
    CompletableFuture<LossReason> lost = new CompletableFuture<>();
    lease.onLoss((l, reason) -> lost.complete(reason));

    clock.advance(Duration.ofSeconds(30));

    assertThat(lease.isHeld()).isFalse();
    assertThat(lost.get(10, TimeUnit.SECONDS)).isEqualTo(LossReason.EXPIRED);
    assertThat(leases.tryAcquire("job", THIRTY_SECONDS)).isPresent();
  }

  @Test
  void aRenewingLeaseSurvivesTheClockMovingOnAsLongAsItRenews() {
    java.util.concurrent.atomic.AtomicInteger renewals =
        new java.util.concurrent.atomic.AtomicInteger();
    try (InMemoryLeaseManager counted =
        leases.anotherInstance(
            leases.options(),
            new dev.fencing.core.LeaseObserver() {
              @Override
              public void onRenewed(Lease lease) {
                renewals.incrementAndGet();
              }
            })) {
      Lease lease = counted.acquire("job", THIRTY_SECONDS);
      for (int i = 1; i <= 10; i++) {
        clock.advance(Duration.ofSeconds(10)); // one renewal interval
        int expected = i;
        waitUntil(() -> renewals.get() >= expected);
      }
      assertThat(lease.isHeld()).isTrue();
      assertThat(clock.advancedBy()).isEqualTo(Duration.ofSeconds(100));
    }
  }

  @Test
  void aDuplicateTokenIsTheLastOneAgain() {
    long first;
    try (Lease lease = leases.acquire("job", THIRTY_SECONDS)) {
      first = lease.token().value();
    }
    leases.handOutDuplicateToken("job");
    try (Lease again = leases.acquire("job", THIRTY_SECONDS)) {
      assertThat(again.token().value()).isEqualTo(first);
    }
  }

  @Test
  void aLostCounterStartsAtOneAgain() {
    for (int i = 0; i < 3; i++) {
      leases.acquire("job", THIRTY_SECONDS).close();
    }
    assertThat(leases.lastToken("job")).hasValueSatisfying(t -> assertThat(t.value()).isEqualTo(3));
    leases.loseCounter("job");
    assertThat(leases.lastToken("job")).isEmpty();
    try (Lease lease = leases.acquire("job", THIRTY_SECONDS)) {
      assertThat(lease.token().value()).isEqualTo(1);
    }
  }

  @Test
  void anUnreachableServerFailsAcquisitionsAndEndsHeldLeasesAfterTheirDeadline() {
    Lease lease = leases.acquire("job", THIRTY_SECONDS);
    leases.setUnreachable(true);

    assertThatThrownBy(() -> leases.acquire("other", THIRTY_SECONDS))
        .isInstanceOf(LeaseBackendException.class);
    clock.advance(Duration.ofSeconds(28)); // past 30 s minus the 3 s safety margin

    assertThat(lease.isHeld()).isFalse();
    waitUntil(() -> lease.lossReason().isPresent());
    assertThat(lease.lossReason()).contains(LossReason.RENEWAL_TIMEOUT);
  }

  @Test
  void anotherInstanceSharesTheLocksAndCounters() {
    try (InMemoryLeaseManager second =
        leases.anotherInstance(leases.options(), dev.fencing.core.LeaseObserver.NONE)) {
      Lease held = leases.acquire("job", THIRTY_SECONDS);
      assertThat(second.tryAcquire("job", THIRTY_SECONDS)).isEmpty();
      held.close();
      try (Lease next = second.acquire("job", THIRTY_SECONDS)) {
        assertThat(next.token().isNewerThan(held.token())).isTrue();
      }
    }
  }

  @Test
  void theClockNeverGoesBack() {
    assertThatThrownBy(() -> clock.advance(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static void waitUntil(java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within 10 s");
      }
      Thread.onSpinWait();
    }
  }
}
