package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.FencingException;
import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseManagerClosedException;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LeaseUnavailableException;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link LeaseManager} must show, as a JUnit 5 suite. Extend it, supply
 * independent managers on the backend under test (as separate application instances would have) and
 * two hooks into the backend, and every test here runs against it.
 *
 * <p>Each test uses its own key prefix and its own resource names, so suites may run in parallel on
 * one server.
 */
public abstract class LeaseManagerContract {

  private final List<LeaseManager> managers = new ArrayList<>();
  private String prefix;
  private String suffix;

  /** Creates the suite. */
  protected LeaseManagerContract() {}

  /**
   * Returns a new manager on the backend under test, independent of the others. The suite closes it
   * after the test.
   *
   * @param options the options, with this test's key prefix
   * @param observer the observer to report to
   * @return the manager
   */
  protected abstract LeaseManager newManager(LeaseOptions options, LeaseObserver observer);

  /**
   * Deletes the lock of {@code resource} on the backend behind its holder's back, as when it
   * expired on the server while its holder was paused.
   *
   * @param keyPrefix the key prefix of the test
   * @param resource the resource
   */
  protected abstract void breakLock(String keyPrefix, String resource);

  /**
   * Returns how many clients are subscribed to releases of {@code resource}, that is, waiting for
   * it.
   *
   * @param keyPrefix the key prefix of the test
   * @param resource the resource
   * @return the number of subscribed waiters (any positive number means at least one)
   */
  protected abstract int releaseSubscribers(String keyPrefix, String resource);

  @BeforeEach
  void newNames() {
    String id = UUID.randomUUID().toString().substring(0, 8);
    prefix = "contract-" + id + ":";
    suffix = "-" + id;
  }

  @AfterEach
  void closeManagersAndRemoveKeys() {
    managers.forEach(LeaseManager::close);
    managers.clear();
    removeKeys(prefix);
  }

  /**
   * Removes whatever the backend stored under {@code keyPrefix}, so that no test leaves locks or
   * counters behind; the default does nothing (a backend that stores nothing outside the JVM).
   *
   * @param keyPrefix the key prefix of the test that just ended
   */
  protected void removeKeys(String keyPrefix) {}

  /** {@return this test's key prefix} */
  protected String prefix() {
    return prefix;
  }

  /**
   * {@return a resource name unique to this test}
   *
   * @param name the name the test gives the resource
   */
  protected String resource(String name) {
    return name + suffix;
  }

  /** {@return a new manager with this test's prefix, closed after the test} */
  protected LeaseManager manager() {
    return manager(LeaseObserver.NONE);
  }

  private LeaseManager manager(LeaseObserver observer) {
    LeaseManager manager = newManager(LeaseOptions.defaults().withKeyPrefix(prefix), observer);
    managers.add(manager);
    return manager;
  }

  private static LeaseRequest lease(long millis) {
    return LeaseRequest.forLeaseTime(Duration.ofMillis(millis));
  }

  @Test
  void shouldIssueStrictlyIncreasingTokens() {
    LeaseManager leases = manager();
    long previous = 0;
    for (int i = 0; i < 20; i++) {
      try (Lease lease = leases.acquire(resource("job"), lease(5000))) {
        assertThat(lease.token().value()).isGreaterThan(previous);
        previous = lease.token().value();
      }
    }
  }

  @Test
  void shouldIssueIncreasingTokensInHoldOrderAcrossThreadsAndInstances() throws Exception {
    LeaseManager first = manager();
    LeaseManager second = manager();
    String shared = resource("shared");
    List<Long> tokensInHoldOrder = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        LeaseManager leases = t % 2 == 0 ? first : second;
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 15; i++) {
                    try (Lease lease =
                        leases.acquire(shared, lease(5000).withMaxWait(Duration.ofSeconds(20)))) {
                      tokensInHoldOrder.add(lease.token().value());
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> future : futures) {
        future.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(tokensInHoldOrder).hasSize(120).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void shouldAllowAtMostOneHolderUnderContention() throws Exception {
    int overlaps = runContention(manager(), manager(), true);
    assertThat(overlaps).as("holders seen inside the section at once").isZero();
  }

  @Test
  void contentionCheckShouldDetectOverlapWhenTheLockIsBypassed() throws Exception {
    int overlaps = runContention(manager(), manager(), false);
    assertThat(overlaps).as("the check must be able to fail").isPositive();
  }

  private int runContention(LeaseManager first, LeaseManager second, boolean useLock)
      throws Exception {
    String contended = resource("contended");
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        LeaseManager leases = t % 2 == 0 ? first : second;
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 25; i++) {
                    Lease lease =
                        useLock
                            ? leases.acquire(
                                contended, lease(500).withMaxWait(Duration.ofSeconds(20)))
                            : null;
                    try {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                      inside.decrementAndGet();
                    } finally {
                      if (lease != null) {
                        lease.close();
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> future : futures) {
        future.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return overlaps.get();
  }

  @Test
  void shouldKeepTheLeaseWhileTheJobOutlivesItsLeaseTime() throws Exception {
    LeaseManager first = manager();
    LeaseManager second = manager();
    String job = resource("billing-nightly");
    try (Lease lease = first.acquire(job, lease(500))) {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2000);
      while (System.nanoTime() < end) {
        assertThat(lease.isHeld()).isTrue();
        assertThat(second.tryAcquire(job, lease(500))).isEmpty();
        Thread.sleep(50); // the job's work: the time under test
      }
      assertThat(lease.lossReason()).isEmpty();
    }
    assertThat(second.tryAcquire(job, lease(500))).isPresent();
  }

  @Test
  void shouldKeepManyLeasesOnDistinctResourcesRenewedTogether() throws Exception {
    LeaseManager leases = manager();
    LeaseManager other = manager();
    List<Lease> held = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      held.add(leases.acquire(resource("many-" + i), lease(500)));
    }
    Thread.sleep(1500); // three lease times: the time under test
    for (Lease lease : held) {
      assertThat(lease.isHeld()).as(lease.resource()).isTrue();
      assertThat(other.tryAcquire(lease.resource(), lease(500))).as(lease.resource()).isEmpty();
      lease.close();
    }
  }

  @Test
  void shouldHonourTheLeaseTimeOfEachAcquisition() {
    LeaseManager leases = manager();
    try (Lease shortLease = leases.acquire(resource("short"), lease(200));
        Lease longLease = leases.acquire(resource("long"), lease(60_000))) {
      assertThat(shortLease.leaseTime()).isEqualTo(Duration.ofMillis(200));
      assertThat(longLease.leaseTime()).isEqualTo(Duration.ofMinutes(1));
    }
  }

  @Test
  void shouldNotDeleteTheSuccessorsLockWhenAnExpiredHolderReleases() {
    LeaseManager stalled = manager();
    LeaseManager successor = manager();
    String job = resource("billing-nightly");
    Lease expired = stalled.acquire(job, lease(30_000));
    breakLock(prefix, job); // expired on the server while its holder was paused
    Lease current = successor.acquire(job, lease(10_000));
    assertThat(current.token()).isGreaterThan(expired.token());

    expired.close(); // still believes it holds the lease: must not delete the successor's lock

    assertThat(successor.tryAcquire(job, lease(10_000))).isEmpty();
    assertThat(current.isHeld()).isTrue();
    current.close();
  }

  @Test
  void breakingTheLockShouldLetASecondHolderInSoTheCheckAboveCanFail() {
    LeaseManager first = manager();
    LeaseManager second = manager();
    String job = resource("billing-nightly");
    first.acquire(job, lease(10_000));

    breakLock(prefix, job); // what an unconditional DEL does

    assertThat(second.tryAcquire(job, lease(10_000))).isPresent();
  }

  @Test
  void shouldWakeAWaiterPromptlyWhenTheHolderReleases() throws Exception {
    LeaseManager first = manager();
    LeaseManager second = manager();
    String report = resource("report");
    Lease holder = first.acquire(report, lease(30_000));
    CompletableFuture<Long> acquiredAt =
        CompletableFuture.supplyAsync(
            () -> {
              try (Lease lease =
                  second.acquire(report, lease(30_000).withMaxWait(Duration.ofSeconds(20)))) {
                return System.nanoTime();
              }
            });
    awaitTrue(() -> releaseSubscribers(prefix, report) > 0, "the waiter subscribed");
    long releasedAt = System.nanoTime();
    holder.close();
    long acquired = acquiredAt.get(20, TimeUnit.SECONDS);
    assertThat(Duration.ofNanos(acquired - releasedAt))
        .as("woken by the release, not by the 30s lease expiry")
        .isLessThan(Duration.ofSeconds(5));
    awaitTrue(() -> releaseSubscribers(prefix, report) == 0, "the waiter unsubscribed");
  }

  @Test
  void shouldHandTheLockToWaitersInTheOrderTheyCameEachWithALargerToken() throws Exception {
    String report = resource("report");
    Lease holder = manager().acquire(report, lease(30_000));
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> waiters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      LeaseManager leases = manager();
      String name = "waiter-" + i;
      waiters.add(
          CompletableFuture.runAsync(
              () -> {
                try (Lease lease =
                    leases.acquire(report, lease(30_000).withMaxWait(Duration.ofSeconds(20)))) {
                  order.add(name);
                  tokens.add(lease.token().value());
                  Thread.sleep(20);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }));
      awaitTrue(() -> releaseSubscribers(prefix, report) > 0, name + " waits");
      // Its place in the queue is taken right after it subscribed (the count of subscribers need
      // not grow: managers on one client share a subscription).
      Thread.sleep(300);
    }

    holder.close();
    CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);

    assertThat(order).containsExactly("waiter-0", "waiter-1", "waiter-2");
    assertThat(tokens).isSorted().doesNotHaveDuplicates();
    assertThat(tokens.get(0)).isGreaterThan(holder.token().value());
  }

  @Test
  void aWaiterThatGaveUpShouldNotHoldUpTheOnesBehindIt() throws Exception {
    String report = resource("report");
    Lease holder = manager().acquire(report, lease(30_000));
    LeaseManager impatient = manager();
    LeaseManager patient = manager();
    CompletableFuture<Boolean> gaveUp =
        CompletableFuture.supplyAsync(
            () ->
                impatient
                    .tryAcquire(report, lease(30_000).withMaxWait(Duration.ofMillis(500)))
                    .isEmpty());
    awaitTrue(() -> releaseSubscribers(prefix, report) > 0, "the impatient waiter waits");
    Thread.sleep(100);
    CompletableFuture<Long> acquiredAt =
        CompletableFuture.supplyAsync(
            () -> {
              try (Lease lease =
                  patient.acquire(report, lease(30_000).withMaxWait(Duration.ofSeconds(20)))) {
                return System.nanoTime();
              }
            });
    assertThat(gaveUp.get(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(100);

    long releasedAt = System.nanoTime();
    holder.close();

    assertThat(Duration.ofNanos(acquiredAt.get(20, TimeUnit.SECONDS) - releasedAt))
        .as("handed on past the waiter that left, not after the 30 s lease time")
        .isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void shouldGiveUpAtTheWaitBound() throws Exception {
    LeaseManager first = manager();
    LeaseManager second = manager();
    String report = resource("report");
    try (Lease holder = first.acquire(report, lease(30_000))) {
      long start = System.nanoTime();
      assertThatThrownBy(
              () -> second.acquire(report, lease(30_000).withMaxWait(Duration.ofMillis(300))))
          .isInstanceOf(LeaseUnavailableException.class)
          .isInstanceOf(FencingException.class)
          .hasMessageContaining(report);
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isGreaterThanOrEqualTo(Duration.ofMillis(300))
          .isLessThan(Duration.ofSeconds(10));
      assertThat(second.tryAcquire(report, lease(30_000).withMaxWait(Duration.ofMillis(100))))
          .isEmpty();
      assertThat(holder.isHeld()).isTrue();
    }
    awaitTrue(() -> releaseSubscribers(prefix, report) == 0, "no waiter left subscribed");
  }

  @Test
  void shouldAcquireAfterTheHoldersLeaseExpires() {
    LeaseManager crashed = manager();
    LeaseManager second = manager();
    String report = resource("report");
    Lease dead = crashed.acquire(report, lease(300));
    crashed.close(); // no more renewals; the lock is left to expire
    try (Lease lease = second.acquire(report, lease(5000).withMaxWait(Duration.ofSeconds(5)))) {
      assertThat(lease.token()).isGreaterThan(dead.token());
    }
  }

  @Test
  void shouldReportATakeOverToListenersExactlyOnce() throws Exception {
    LeaseManager leases = manager();
    Lease lease = leases.acquire(resource("job"), lease(300));
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<LossReason> reason = new AtomicReference<>();
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLoss(
        (l, why) -> {
          reason.set(why);
          calls.incrementAndGet();
          lost.countDown();
        });

    breakLock(prefix, resource("job"));

    assertThat(lost.await(5, TimeUnit.SECONDS)).as("loss reported").isTrue();
    assertThat(reason.get()).isEqualTo(LossReason.TAKEN_OVER);
    assertThat(lease.isHeld()).isFalse();
    assertThatThrownBy(lease::checkHeld)
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("TAKEN_OVER");
    lease.markLost(LossReason.SUPERSEDED); // neither may call the listener again
    lease.close();
    flushListeners(leases);
    assertThat(calls.get()).as("exactly once").isEqualTo(1);
    assertThat(lease.lossReason()).hasValue(LossReason.TAKEN_OVER);
    AtomicInteger late = new AtomicInteger();
    lease.onLoss((l, why) -> late.incrementAndGet());
    assertThat(late.get()).as("a listener added after the loss is called at once").isEqualTo(1);
  }

  @Test
  void markLostShouldEndTheLeaseAtOnceNotifyOnceAndFreeTheResource() throws Exception {
    LeaseManager leases = manager();
    LeaseManager other = manager();
    String job = resource("job");
    Lease lease = leases.acquire(job, lease(30_000));
    AtomicInteger calls = new AtomicInteger();
    AtomicReference<LossReason> reason = new AtomicReference<>();
    AtomicReference<Thread> listenerThread = new AtomicReference<>();
    CountDownLatch lost = new CountDownLatch(1);
    lease.onLoss(
        (l, why) -> {
          reason.set(why);
          listenerThread.set(Thread.currentThread());
          calls.incrementAndGet();
          lost.countDown();
        });

    lease.markLost(LossReason.SUPERSEDED);

    assertThat(lease.isHeld()).as("at once").isFalse();
    assertThat(lease.lossReason()).hasValue(LossReason.SUPERSEDED);
    assertThatThrownBy(lease::checkHeld).hasMessageContaining("SUPERSEDED");
    lease.markLost(LossReason.SUPERSEDED);
    lease.markLost(LossReason.TAKEN_OVER);
    assertThat(lost.await(5, TimeUnit.SECONDS)).isTrue();
    flushListeners(leases);
    assertThat(calls.get()).isEqualTo(1);
    assertThat(reason.get()).isEqualTo(LossReason.SUPERSEDED);
    assertThat(lease.lossReason()).hasValue(LossReason.SUPERSEDED);
    try (Lease next = other.acquire(job, lease(30_000).withMaxWait(Duration.ofSeconds(5)))) {
      assertThat(next.token())
          .as("renewals stopped and the lock was freed")
          .isGreaterThan(lease.token());
    }
  }

  @Test
  void aThrowingListenerShouldNotStopOtherListenersOrRenewals() throws Exception {
    LeaseManager leases = manager();
    Lease failing = leases.acquire(resource("failing"), lease(30_000));
    Lease renewed = leases.acquire(resource("renewed"), lease(300));
    CountDownLatch secondListener = new CountDownLatch(1);
    failing.onLoss(
        (l, why) -> {
          throw new AssertionError("a listener that fails with an Error");
        });
    failing.onLoss(
        (l, why) -> {
          throw new IllegalStateException("a listener that fails with an exception");
        });
    failing.onLoss((l, why) -> secondListener.countDown());

    failing.markLost(LossReason.SUPERSEDED);

    assertThat(secondListener.await(5, TimeUnit.SECONDS)).as("later listener called").isTrue();
    Thread.sleep(1000); // three lease times of the other lease: the time under test
    assertThat(renewed.isHeld()).as("the heartbeat goes on").isTrue();
    assertThat(renewed.lossReason()).isEmpty();
    renewed.close();
  }

  @Test
  void aNonRenewingLeaseShouldEndAfterItsLeaseTimeAndSaySo() throws Exception {
    LeaseManager leases = manager();
    LeaseManager other = manager();
    String job = resource("once");
    Lease lease = leases.acquire(job, lease(400).withoutRenewal());
    CountDownLatch lost = new CountDownLatch(1);
    AtomicReference<LossReason> reason = new AtomicReference<>();
    lease.onLoss(
        (l, why) -> {
          reason.set(why);
          lost.countDown();
        });
    assertThat(lease.isHeld()).isTrue();
    assertThat(lost.await(5, TimeUnit.SECONDS)).as("the end of the lease is reported").isTrue();
    assertThat(reason.get()).isEqualTo(LossReason.EXPIRED);
    assertThat(lease.isHeld()).isFalse();
    try (Lease next = other.acquire(job, lease(400).withMaxWait(Duration.ofSeconds(5)))) {
      assertThat(next.token()).isGreaterThan(lease.token());
    }
  }

  @Test
  void aReleaseThatKeepsTheLockShouldHoldOthersOffForThatLong() {
    LeaseManager leases = manager();
    LeaseManager other = manager();
    String job = resource("at-least");
    Lease lease = leases.acquire(job, lease(10_000));
    long releasedAt = System.nanoTime();

    lease.release(Duration.ofMillis(700));

    assertThat(lease.isHeld()).isFalse();
    assertThat(lease.lossReason()).isEmpty();
    assertThat(other.tryAcquire(job, lease(10_000))).isEmpty();
    try (Lease next = other.acquire(job, lease(10_000).withMaxWait(Duration.ofSeconds(5)))) {
      assertThat(Duration.ofNanos(System.nanoTime() - releasedAt))
          .isGreaterThanOrEqualTo(Duration.ofMillis(600));
      assertThat(next.token()).isGreaterThan(lease.token());
    }
    assertThatThrownBy(() -> lease.release(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void closingTheManagerShouldReportHeldLeasesLostAndRefuseLaterCalls() throws Exception {
    LeaseManager leases = manager();
    Lease held = leases.acquire(resource("job"), lease(30_000));
    CountDownLatch lost = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    held.onLoss(
        (l, why) -> {
          calls.incrementAndGet();
          lost.countDown();
        });

    leases.close();
    leases.close();

    assertThat(held.isHeld()).isFalse();
    assertThat(held.lossReason()).hasValue(LossReason.MANAGER_CLOSED);
    assertThat(lost.await(5, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> leases.acquire(resource("job"), lease(30_000)))
        .isInstanceOf(LeaseManagerClosedException.class)
        .isInstanceOf(FencingException.class);
    assertThatThrownBy(() -> leases.tryAcquire(resource("other"), lease(30_000)))
        .isInstanceOf(LeaseManagerClosedException.class);
    assertThat(calls.get()).isEqualTo(1);
  }

  @Test
  void shouldBeClosableFromAnotherThreadAndTwice() throws Exception {
    LeaseManager leases = manager();
    Lease lease = leases.acquire(resource("job"), lease(5000));
    Thread closer = new Thread(lease::close);
    closer.start();
    closer.join();
    lease.close();
    assertThat(lease.isHeld()).isFalse();
    assertThat(lease.lossReason()).isEmpty();
    assertThatThrownBy(lease::checkHeld).hasMessageContaining("released");
    try (Lease next = leases.acquire(resource("job"), lease(5000))) {
      assertThat(next.token()).isGreaterThan(lease.token());
    }
  }

  @Test
  void shouldAdvanceTheTokenFloorWithoutEverLoweringIt() {
    LeaseManager leases = manager();
    String job = resource("job");
    leases.advanceTokenFloor(job, FencingToken.of(1000));
    try (Lease lease = leases.acquire(job, lease(5000))) {
      assertThat(lease.token().value()).isEqualTo(1001);
    }
    leases.advanceTokenFloor(job, FencingToken.of(10));
    try (Lease lease = leases.acquire(job, lease(5000))) {
      assertThat(lease.token().value()).isEqualTo(1002);
    }
  }

  @Test
  void shouldNotifyTheObserverOfEveryStateChange() throws Exception {
    List<String> events = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch renewed = new CountDownLatch(1);
    LeaseObserver observer =
        new LeaseObserver() {
          @Override
          public void onAcquired(Lease lease) {
            events.add("acquired");
          }

          @Override
          public void onRenewed(Lease lease) {
            events.add("renewed");
            renewed.countDown();
          }

          @Override
          public void onReleased(Lease lease, boolean deleted) {
            events.add("released:" + deleted);
          }
        };
    LeaseManager leases = manager(observer);
    try (Lease lease = leases.acquire(resource("job"), lease(300))) {
      assertThat(renewed.await(5, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(events).startsWith("acquired", "renewed").endsWith("released:true");
  }

  /**
   * Waits until the listeners queued so far on {@code leases} have run, by losing a marker lease
   * and waiting for its listener.
   */
  private void flushListeners(LeaseManager leases) throws InterruptedException {
    Lease marker = leases.acquire(resource("marker-" + UUID.randomUUID()), lease(30_000));
    CountDownLatch done = new CountDownLatch(1);
    marker.onLoss((l, why) -> done.countDown());
    marker.markLost(LossReason.SUPERSEDED);
    assertThat(done.await(5, TimeUnit.SECONDS)).as("listeners flushed").isTrue();
  }

  private static void awaitTrue(BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(5); // polls the state waited for
    }
  }
}
