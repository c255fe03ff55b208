package dev.fencing.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.testing.RedisServers;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * A waiter that never hears of its hand-off (the announcement is lost on the way) still gets the
 * lock, with the handed token, once the lock's remaining time is up: no lost wake-up waits longer
 * than that bound.
 */
class MissedHandOffTest {

  private final RedissonClient redisson = RedisServers.connectShared();
  private final String prefix = "missed-handoff-" + UUID.randomUUID() + ":";

  @AfterEach
  void disconnect() {
    redisson.getKeys().deleteByPattern(prefix + "*");
    redisson.shutdown();
  }

  @Test
  void aWaiterThatMissesItsHandOffGetsTheLockWhenTheLocksTimeIsUp() throws Exception {
    long waited = handOffWait(true);

    assertThat(Duration.ofNanos(waited))
        .as("woken by the lock's time bound (1.5 s lease), not by the announcement")
        .isGreaterThan(Duration.ofMillis(800))
        .isLessThan(Duration.ofSeconds(8));
  }

  @Test
  void aWaiterThatHearsItsHandOffGetsTheLockAtOnce() throws Exception {
    long waited = handOffWait(false);

    assertThat(Duration.ofNanos(waited)).isLessThan(Duration.ofMillis(800));
  }

  @Test
  void aLeaseHandedOverByAnotherProcessIsRenewedLikeAnyOther() throws Exception {
    LeaseStore releasing = new RedisLeaseStore(redisson, prefix);
    LeaseStore waiting = new RedisLeaseStore(redisson, prefix);
    LeaseRequest shortLease = LeaseRequest.forLeaseTime(Duration.ofMillis(1500));
    try (LeaseLifecycle holders = LeaseLifecycle.start(releasing, options(), LeaseObserver.NONE);
        LeaseLifecycle waiters = LeaseLifecycle.start(waiting, options(), LeaseObserver.NONE)) {
      Lease holder = holders.acquire("job", shortLease);
      CompletableFuture<Lease> waiter =
          CompletableFuture.supplyAsync(
              () -> waiters.acquire("job", shortLease.withMaxWait(Duration.ofSeconds(10))));
      Thread.sleep(300); // queued by now
      holder.close();
      Lease handed = waiter.get(10, TimeUnit.SECONDS);

      Thread.sleep(3000); // twice the lease time: only renewals keep the lock

      assertThat(handed.isHeld()).isTrue();
      assertThat(releasing.acquire("job", "other", 1500).get())
          .as("the handed lock is still there, renewed")
          .isNegative();
      handed.close();
    }
  }

  /** Returns the time from the release to the waiter holding, with or without its announcements. */
  private long handOffWait(boolean deaf) throws Exception {
    LeaseStore redis = new RedisLeaseStore(redisson, prefix);
    LeaseStore waiterStore = new RedisLeaseStore(redisson, prefix);
    LeaseRequest shortLease = LeaseRequest.forLeaseTime(Duration.ofMillis(1500));
    try (LeaseLifecycle holders = LeaseLifecycle.start(redis, options(), LeaseObserver.NONE);
        LeaseLifecycle waiters =
            LeaseLifecycle.start(
                deaf ? new Deaf(waiterStore) : waiterStore, options(), LeaseObserver.NONE)) {
      Lease holder = holders.acquire("job", shortLease);
      CompletableFuture<Lease> waiting =
          CompletableFuture.supplyAsync(
              () -> waiters.acquire("job", shortLease.withMaxWait(Duration.ofSeconds(10))));
      Thread.sleep(300); // queued by now
      long releasedAt = System.nanoTime();
      holder.close();
      Lease handed = waiting.get(10, TimeUnit.SECONDS);
      long waited = System.nanoTime() - releasedAt;
      assertThat(handed.token().value()).isEqualTo(holder.token().value() + 1);
      assertThat(handed.isHeld()).isTrue();
      handed.close();
      return waited;
    }
  }

  private static LeaseOptions options() {
    return LeaseOptions.defaults();
  }

  /** A Redis store whose release announcements never arrive. */
  private record Deaf(LeaseStore store) implements LeaseStore {
    @Override
    public CompletableFuture<Long> acquire(String resource, String leaseId, long leaseMillis) {
      return store.acquire(resource, leaseId, leaseMillis);
    }

    @Override
    public CompletableFuture<Long> acquireOrQueue(
        String resource, String leaseId, long leaseMillis, long queueMillis) {
      return store.acquireOrQueue(resource, leaseId, leaseMillis, queueMillis);
    }

    @Override
    public CompletableFuture<Released> abandon(String resource, String leaseId, long leaseMillis) {
      return store.abandon(resource, leaseId, leaseMillis);
    }

    @Override
    public List<CompletableFuture<Boolean>> renew(List<Renewal> renewals) {
      return store.renew(renewals);
    }

    @Override
    public CompletableFuture<Released> release(String resource, String value, long keepMillis) {
      return store.release(resource, value, keepMillis);
    }

    @Override
    public CompletableFuture<Void> advanceFloor(String resource, long floor) {
      return store.advanceFloor(resource, floor);
    }

    @Override
    public CompletableFuture<Subscription> subscribeReleases(
        String resource, ReleaseListener listener) {
      return store.subscribeReleases(resource, (handedTo, token) -> {});
    }

    @Override
    public String describe() {
      return store.describe();
    }
  }
}
