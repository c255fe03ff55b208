package dev.fencing.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.testing.RedisServers;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.redisson.api.RedissonClient;

/**
 * The queue and the hand-off of the lease stores, alike on Redis (the scripts) and in memory: a
 * release gives the lock to the first live waiter with a fresh token, in the same atomic step.
 */
class HandOffTest {

  private static final long LEASE = 30_000;
  private static final long STAY = 2_000;
  private static RedissonClient redisson;

  @BeforeAll
  static void connect() {
    redisson = RedisServers.connectShared();
  }

  @AfterAll
  static void disconnect() {
    redisson.getKeys().deleteByPattern("handoff-test-*");
    redisson.shutdown();
  }

  static Stream<Arguments> stores() {
    String prefix = "handoff-test-" + UUID.randomUUID() + ":";
    return Stream.of(
        Arguments.of("redis", new RedisLeaseStore(redisson, prefix)),
        Arguments.of("in memory", new InMemoryLeaseStore(Ticker.SYSTEM)));
  }

  private static String resource() {
    return "r" + UUID.randomUUID().toString().substring(0, 8);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aReleaseHandsTheLockToTheWaitersInTheOrderTheyQueuedEachWithAFreshToken(
      String name, LeaseStore store) throws Exception {
    String r = resource();
    long holder = store.acquire(r, "h", LEASE).get();
    assertThat(store.acquireOrQueue(r, "a", LEASE, STAY).get()).isNegative();
    assertThat(store.acquireOrQueue(r, "b", LEASE, STAY).get()).isNegative();
    assertThat(store.acquireOrQueue(r, "a", LEASE, STAY).get())
        .as("asking again keeps a's place")
        .isNegative();

    LeaseStore.Released first = store.release(r, "h:" + holder, 0).get();

    assertThat(first.held()).isTrue();
    assertThat(first.handedTo()).isEqualTo("a");
    assertThat(first.handedToken()).isEqualTo(holder + 1);
    assertThat(store.acquire(r, "x", LEASE).get()).as("the lock is a's now").isNegative();
    LeaseStore.Released second = store.release(r, "a:" + first.handedToken(), 0).get();
    assertThat(second.handedTo()).isEqualTo("b");
    assertThat(second.handedToken()).isEqualTo(holder + 2);
    LeaseStore.Released last = store.release(r, "b:" + second.handedToken(), 0).get();
    assertThat(last).isEqualTo(LeaseStore.Released.FREED);
    assertThat(store.acquire(r, "x", LEASE).get()).isEqualTo(holder + 3);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aWaiterThatAsksAgainAfterItWasHandedTheLockGetsItsTokenAndAFullLeaseTime(
      String name, LeaseStore store) throws Exception {
    String r = resource();
    long holder = store.acquire(r, "h", LEASE).get();
    store.acquireOrQueue(r, "a", 5_000, STAY).get();
    LeaseStore.Released handed = store.release(r, "h:" + holder, 0).get();

    // the announcement was missed; the waiter asks again once the lock's time is up
    long token = store.acquireOrQueue(r, "a", LEASE, STAY).get();

    assertThat(token).isEqualTo(handed.handedToken());
    assertThat(store.renew(List.of(new LeaseStore.Renewal(r, "a:" + token, LEASE))).get(0).get())
        .isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aWaiterThatGaveUpIsSkippedAndOneHandedTheLockPassesItOn(String name, LeaseStore store)
      throws Exception {
    String r = resource();
    long holder = store.acquire(r, "h", LEASE).get();
    store.acquireOrQueue(r, "gone", LEASE, STAY).get();
    store.acquireOrQueue(r, "a", LEASE, STAY).get();
    store.acquireOrQueue(r, "b", LEASE, STAY).get();

    assertThat(store.abandon(r, "gone", LEASE).get()).isEqualTo(LeaseStore.Released.NOT_HELD);
    LeaseStore.Released toA = store.release(r, "h:" + holder, 0).get();
    assertThat(toA.handedTo()).isEqualTo("a");
    LeaseStore.Released toB = store.abandon(r, "a", LEASE).get();

    assertThat(toB.held()).isTrue();
    assertThat(toB.handedTo()).isEqualTo("b");
    assertThat(toB.handedToken()).isGreaterThan(toA.handedToken());
    assertThat(store.acquireOrQueue(r, "gone", LEASE, STAY).get())
        .as("an abandoned lease id never queues again")
        .isEqualTo(-1L);
    assertThat(store.acquireOrQueue(r, "a", LEASE, STAY).get()).isEqualTo(-1L);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aQueuedWaiterThatStoppedAskingIsSkipped(String name, LeaseStore store) throws Exception {
    String r = resource();
    long holder = store.acquire(r, "h", 200).get();
    store.acquireOrQueue(r, "dead", LEASE, 0).get(); // stays no longer than the lock's 200 ms
    assertThat(store.renew(List.of(new LeaseStore.Renewal(r, "h:" + holder, LEASE))).get(0).get())
        .isTrue();
    Thread.sleep(400);
    store.acquireOrQueue(r, "alive", LEASE, STAY).get();

    LeaseStore.Released released = store.release(r, "h:" + holder, 0).get();

    assertThat(released.handedTo()).isEqualTo("alive");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aReleaseThatKeepsTheLockHandsNothingOver(String name, LeaseStore store) throws Exception {
    String r = resource();
    long holder = store.acquire(r, "h", LEASE).get();
    store.acquireOrQueue(r, "a", LEASE, STAY).get();

    assertThat(store.release(r, "h:" + holder, 10_000).get()).isEqualTo(LeaseStore.Released.FREED);
    assertThat(store.release(r, "other:1", 0).get()).isEqualTo(LeaseStore.Released.NOT_HELD);
    assertThat(store.acquireOrQueue(r, "a", LEASE, STAY).get()).isNegative();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aWaiterQueuedThroughAnotherStoreHearsItsHandOffAnnounced(String name, LeaseStore unused)
      throws Exception {
    String prefix = "handoff-test-" + UUID.randomUUID() + ":";
    InMemoryLeaseStore memory = new InMemoryLeaseStore(Ticker.SYSTEM);
    LeaseStore releasing = name.equals("redis") ? new RedisLeaseStore(redisson, prefix) : memory;
    LeaseStore waiting = name.equals("redis") ? new RedisLeaseStore(redisson, prefix) : memory;
    String r = resource();
    List<String> heard = Collections.synchronizedList(new ArrayList<>());
    LeaseStore.Subscription subscription =
        waiting.subscribeReleases(r, (to, token) -> heard.add(to + ":" + token)).get();
    try {
      long holder = releasing.acquire(r, "h", LEASE).get();
      waiting.acquireOrQueue(r, "a", LEASE, STAY).get();

      LeaseStore.Released handed = releasing.release(r, "h:" + holder, 0).get();
      releasing.release(r, "a:" + handed.handedToken(), 0).get();

      long deadline = System.nanoTime() + 5_000_000_000L;
      while (heard.size() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(heard).containsExactly("a:" + handed.handedToken(), "null:0");
    } finally {
      subscription.cancel();
    }
  }

  @org.junit.jupiter.api.Test
  void aHandOffToAWaiterOfTheSameRedisStoreIsNotAnnounced() throws Exception {
    LeaseStore store = new RedisLeaseStore(redisson, "handoff-test-" + UUID.randomUUID() + ":");
    String r = resource();
    List<String> heard = Collections.synchronizedList(new ArrayList<>());
    LeaseStore.Subscription subscription =
        store.subscribeReleases(r, (to, token) -> heard.add(to + ":" + token)).get();
    try {
      long holder = store.acquire(r, "h", LEASE).get();
      store.acquireOrQueue(r, "a", LEASE, STAY).get();
      LeaseStore.Released handed = store.release(r, "h:" + holder, 0).get();
      store.release(r, "a:" + handed.handedToken(), 0).get();

      long deadline = System.nanoTime() + 5_000_000_000L;
      while (heard.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      Thread.sleep(100);
      assertThat(heard).as("only the plain release is announced").containsExactly("null:0");
    } finally {
      subscription.cancel();
    }
  }
}
