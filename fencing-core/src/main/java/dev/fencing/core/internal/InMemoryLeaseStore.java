package dev.fencing.core.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Leases in this JVM's memory, with the same semantics as the Redis scripts and lock expiry judged
 * by a {@link Ticker}. For tests: it lets the lifecycle run on a fake clock, and can be made to
 * fail or to lose replies. Tokens live only as long as this object.
 */
public final class InMemoryLeaseStore implements LeaseStore {

  private final Ticker ticker;
  private final Map<String, Lock> locks = new HashMap<>();
  private final Map<String, Long> counters = new HashMap<>();
  private final Set<String> abandoned = new java.util.HashSet<>();
  private final Map<String, LinkedHashMap<String, Waiting>> queues = new HashMap<>();
  private final Map<String, Set<ReleaseListener>> watchers = new ConcurrentHashMap<>();
  private final AtomicInteger renewalRepliesToLose = new AtomicInteger();
  private final List<Runnable> delayed = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile boolean down;
  private volatile boolean delaySubscriptions;

  /**
   * Creates an empty store.
   *
   * @param ticker the clock that expires locks
   */
  public InMemoryLeaseStore(Ticker ticker) {
    this.ticker = ticker;
  }

  @Override
  public CompletableFuture<Long> acquire(String resource, String leaseId, long leaseMillis) {
    if (down) {
      return unreachable();
    }
    synchronized (this) {
      if (abandoned.contains(leaseId)) {
        return CompletableFuture.completedFuture(-1L);
      }
      Lock lock = live(resource);
      if (lock != null) {
        long remaining = TimeUnit.NANOSECONDS.toMillis(lock.expiresAt() - ticker.nanoTime());
        return CompletableFuture.completedFuture(-Math.max(0, remaining) - 1);
      }
      long token = counters.merge(resource, 1L, Long::sum);
      locks.put(resource, new Lock(leaseId + ":" + token, expiry(leaseMillis)));
      return CompletableFuture.completedFuture(token);
    }
  }

  @Override
  public CompletableFuture<Long> acquireOrQueue(
      String resource, String leaseId, long leaseMillis, long queueMillis) {
    if (down) {
      return unreachable();
    }
    synchronized (this) {
      if (abandoned.contains(leaseId)) {
        return CompletableFuture.completedFuture(-1L);
      }
      LinkedHashMap<String, Waiting> queue =
          queues.computeIfAbsent(resource, any -> new LinkedHashMap<>());
      Lock lock = live(resource);
      String owner = leaseId + ":";
      if (lock != null && lock.value().startsWith(owner)) {
        locks.put(resource, new Lock(lock.value(), expiry(leaseMillis)));
        queue.remove(leaseId);
        return CompletableFuture.completedFuture(
            Long.parseLong(lock.value().substring(owner.length())));
      }
      if (lock == null) {
        long token = counters.merge(resource, 1L, Long::sum);
        locks.put(resource, new Lock(owner + token, expiry(leaseMillis)));
        queue.remove(leaseId);
        return CompletableFuture.completedFuture(token);
      }
      long remaining =
          Math.max(0, TimeUnit.NANOSECONDS.toMillis(lock.expiresAt() - ticker.nanoTime()));
      Waiting entry = new Waiting(leaseMillis, expiry(remaining + queueMillis));
      if (queue.containsKey(leaseId)) {
        queue.replace(leaseId, entry); // keeps its place
      } else {
        queue.put(leaseId, entry);
      }
      return CompletableFuture.completedFuture(-remaining - 1);
    }
  }

  @Override
  public CompletableFuture<Released> abandon(String resource, String leaseId, long leaseMillis) {
    if (down) {
      return unreachable();
    }
    Released released;
    synchronized (this) {
      abandoned.add(leaseId);
      LinkedHashMap<String, Waiting> queue = queues.get(resource);
      if (queue != null) {
        queue.remove(leaseId);
      }
      Lock lock = live(resource);
      if (lock == null || !lock.value().startsWith(leaseId + ":")) {
        return CompletableFuture.completedFuture(Released.NOT_HELD);
      }
      locks.remove(resource);
      released = handOff(resource);
    }
    announce(resource, released);
    return CompletableFuture.completedFuture(released);
  }

  @Override
  public List<CompletableFuture<Boolean>> renew(List<Renewal> renewals) {
    if (down) {
      List<CompletableFuture<Boolean>> failed = new ArrayList<>();
      renewals.forEach(any -> failed.add(unreachable()));
      return failed;
    }
    List<Boolean> renewed = new ArrayList<>(renewals.size());
    synchronized (this) {
      for (Renewal renewal : renewals) {
        Lock lock = live(renewal.resource());
        boolean ours = lock != null && lock.value().equals(renewal.value());
        if (ours) {
          locks.put(renewal.resource(), new Lock(lock.value(), expiry(renewal.leaseMillis())));
        }
        renewed.add(ours);
      }
    }
    boolean lost = renewalRepliesToLose.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
    List<CompletableFuture<Boolean>> answers = new ArrayList<>(renewed.size());
    for (Boolean one : renewed) {
      // when lost: applied, but the answer never arrives
      answers.add(lost ? new CompletableFuture<>() : CompletableFuture.completedFuture(one));
    }
    return answers;
  }

  @Override
  public CompletableFuture<Released> release(String resource, String value, long keepMillis) {
    if (down) {
      return unreachable();
    }
    Released released;
    synchronized (this) {
      Lock lock = live(resource);
      if (lock == null || !lock.value().equals(value)) {
        return CompletableFuture.completedFuture(Released.NOT_HELD);
      }
      if (keepMillis > 0) {
        locks.put(resource, new Lock(value, expiry(keepMillis)));
        return CompletableFuture.completedFuture(Released.FREED);
      }
      locks.remove(resource);
      released = handOff(resource);
    }
    announce(resource, released);
    return CompletableFuture.completedFuture(released);
  }

  /** Gives the free lock to the first live waiter, as the release script does. */
  private Released handOff(String resource) {
    LinkedHashMap<String, Waiting> queue = queues.get(resource);
    while (queue != null && !queue.isEmpty()) {
      Map.Entry<String, Waiting> first = queue.entrySet().iterator().next();
      queue.remove(first.getKey());
      if (ticker.nanoTime() - first.getValue().expiresAt() < 0) {
        long token = counters.merge(resource, 1L, Long::sum);
        locks.put(
            resource,
            new Lock(first.getKey() + ":" + token, expiry(first.getValue().leaseMillis())));
        return new Released(true, first.getKey(), token);
      }
    }
    return Released.FREED;
  }

  @Override
  public CompletableFuture<Void> advanceFloor(String resource, long floor) {
    if (down) {
      return unreachable();
    }
    synchronized (this) {
      counters.merge(resource, floor, Math::max);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<Subscription> subscribeReleases(
      String resource, ReleaseListener listener) {
    if (down) {
      return unreachable();
    }
    ReleaseListener watcher = listener::onRelease; // a distinct object per subscription
    watchers.computeIfAbsent(resource, any -> ConcurrentHashMap.newKeySet()).add(watcher);
    Subscription subscription =
        () -> {
          Set<ReleaseListener> set = watchers.get(resource);
          if (set != null) {
            set.remove(watcher);
          }
        };
    if (delaySubscriptions) {
      CompletableFuture<Subscription> late = new CompletableFuture<>();
      delayed.add(() -> late.complete(subscription));
      return late;
    }
    return CompletableFuture.completedFuture(subscription);
  }

  @Override
  public String describe() {
    return "the in-memory lease store";
  }

  /** Makes every later call fail as if the server were unreachable, or work again. */
  public void setDown(boolean down) {
    this.down = down;
  }

  /** Applies the next {@code count} renewal calls but never answers them. */
  public void loseRenewalReplies(int count) {
    renewalRepliesToLose.set(count);
  }

  /**
   * While on, subscriptions take effect at once but their confirmation is held back until {@link
   * #confirmDelayedSubscriptions()}.
   */
  public void delaySubscriptions(boolean delay) {
    this.delaySubscriptions = delay;
  }

  /** Confirms the subscriptions held back so far. */
  public void confirmDelayedSubscriptions() {
    List<Runnable> pending = List.copyOf(delayed);
    delayed.clear();
    pending.forEach(Runnable::run);
  }

  /** Deletes the lock of {@code resource} behind its holder's back, as an expiry on a server. */
  public synchronized void breakLock(String resource) {
    locks.remove(resource);
  }

  /**
   * Sets the token counter of {@code resource}, as a server that lost increments (a fail-over to a
   * lagging replica, a restart without persistence) would have it; zero forgets the counter.
   */
  public synchronized void setCounter(String resource, long value) {
    if (value <= 0) {
      counters.remove(resource);
    } else {
      counters.put(resource, value);
    }
  }

  /** Returns the token counter of {@code resource}: the last token handed out, or zero. */
  public synchronized long counter(String resource) {
    return counters.getOrDefault(resource, 0L);
  }

  /** Returns whether {@code resource} is locked right now. */
  public synchronized boolean isLocked(String resource) {
    return live(resource) != null;
  }

  /** Returns the number of acquisitions queued on {@code resource}, live or not. */
  public synchronized int queued(String resource) {
    LinkedHashMap<String, Waiting> queue = queues.get(resource);
    return queue == null ? 0 : queue.size();
  }

  /** Returns the number of release subscriptions currently open on {@code resource}. */
  public int subscriptions(String resource) {
    Set<ReleaseListener> set = watchers.get(resource);
    return set == null ? 0 : set.size();
  }

  private Lock live(String resource) {
    Lock lock = locks.get(resource);
    if (lock != null && ticker.nanoTime() - lock.expiresAt() >= 0) {
      locks.remove(resource);
      return null;
    }
    return lock;
  }

  private long expiry(long millis) {
    return ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
  }

  private void announce(String resource, Released released) {
    Set<ReleaseListener> set = watchers.get(resource);
    if (set != null) {
      set.forEach(listener -> listener.onRelease(released.handedTo(), released.handedToken()));
    }
  }

  private static <T> CompletableFuture<T> unreachable() {
    return CompletableFuture.failedFuture(
        new IllegalStateException("the in-memory lease store is down (test)"));
  }

  private record Lock(String value, long expiresAt) {}

  private record Waiting(long leaseMillis, long expiresAt) {}
}
