package dev.fencing.core.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.redisson.api.RScript;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Leases in Redis: each operation is one atomic Lua script (see {@link Scripts}). Waiters queue per
 * resource; a release hands the lock to the first of them in the same script and announces it on
 * the resource's pub/sub channel. The keys of one resource share a hash slot, so the same scripts
 * run on Redis Cluster; renewals are grouped by slot.
 */
public final class RedisLeaseStore implements LeaseStore {

  private static final int MAX_RENEWALS_PER_CALL = 500;
  private static final String HANDOFF_PREFIX = "handoff:";
  private static final java.security.SecureRandom INSTANCE_IDS = new java.security.SecureRandom();

  private final RedissonClient redisson;
  private final RScript script;
  private final String keyPrefix;
  private final boolean cluster;
  private final String description;
  // Names this store in the queue: a hand-off from this store to a waiter that queued through it
  // is not announced, the lifecycle tells the waiter itself.
  private final String instance = newInstanceId();

  /**
   * Creates the store. It does not own the client.
   *
   * @param redisson the client
   * @param keyPrefix the prefix of every key
   */
  public RedisLeaseStore(RedissonClient redisson, String keyPrefix) {
    this.redisson = redisson;
    this.script = redisson.getScript(StringCodec.INSTANCE);
    this.keyPrefix = keyPrefix;
    Config config = redisson.getConfig();
    this.cluster = config.isClusterConfig();
    this.description = describe(config);
  }

  @Override
  public CompletableFuture<Long> acquire(String resource, String leaseId, long leaseMillis) {
    Keys keys = keys(resource);
    return run(
        Scripts.ACQUIRE,
        keys.lock(),
        List.of(keys.lock(), keys.counter(), keys.abandoned(leaseId)),
        RScript.ReturnType.LONG,
        leaseId,
        Long.toString(leaseMillis));
  }

  @Override
  public CompletableFuture<Long> acquireOrQueue(
      String resource, String leaseId, long leaseMillis, long queueMillis) {
    Keys keys = keys(resource);
    return run(
        Scripts.ACQUIRE_OR_QUEUE,
        keys.lock(),
        List.of(keys.lock(), keys.counter(), keys.abandoned(leaseId), keys.queue(), keys.waiting()),
        RScript.ReturnType.LONG,
        leaseId,
        Long.toString(leaseMillis),
        Long.toString(queueMillis),
        instance);
  }

  @Override
  public CompletableFuture<Released> abandon(String resource, String leaseId, long leaseMillis) {
    Keys keys = keys(resource);
    return this.<String>run(
            Scripts.ABANDON,
            keys.lock(),
            List.of(
                keys.lock(),
                keys.abandoned(leaseId),
                keys.channel(),
                keys.queue(),
                keys.waiting(),
                keys.counter()),
            RScript.ReturnType.VALUE,
            leaseId,
            Long.toString(leaseMillis),
            instance)
        .thenApply(RedisLeaseStore::released);
  }

  @Override
  public List<CompletableFuture<Boolean>> renew(List<Renewal> renewals) {
    Map<Integer, List<Integer>> bySlot = new HashMap<>();
    for (int i = 0; i < renewals.size(); i++) {
      int slot = cluster ? Slots.of(renewals.get(i).resource()) : 0;
      bySlot.computeIfAbsent(slot, any -> new ArrayList<>()).add(i);
    }
    List<CompletableFuture<Boolean>> results = new ArrayList<>(renewals.size());
    for (int i = 0; i < renewals.size(); i++) {
      results.add(new CompletableFuture<>());
    }
    for (List<Integer> slot : bySlot.values()) {
      for (int from = 0; from < slot.size(); from += MAX_RENEWALS_PER_CALL) {
        List<Integer> batch =
            slot.subList(from, Math.min(slot.size(), from + MAX_RENEWALS_PER_CALL));
        renewBatch(renewals, batch, results);
      }
    }
    return results;
  }

  /** Renews locks of one hash slot in one call; each lease's future completes with it. */
  private void renewBatch(
      List<Renewal> renewals, List<Integer> batch, List<CompletableFuture<Boolean>> results) {
    List<Object> keys = new ArrayList<>(batch.size());
    Object[] args = new Object[batch.size() * 2];
    for (int i = 0; i < batch.size(); i++) {
      Renewal renewal = renewals.get(batch.get(i));
      keys.add(keys(renewal.resource()).lock());
      args[2 * i] = renewal.value();
      args[2 * i + 1] = Long.toString(renewal.leaseMillis());
    }
    CompletableFuture<List<Object>> call;
    try {
      call = run(Scripts.RENEW_MANY, (String) keys.get(0), keys, RScript.ReturnType.LIST, args);
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    call.whenComplete(
        (renewed, failure) -> {
          for (int i = 0; i < batch.size(); i++) {
            CompletableFuture<Boolean> result = results.get(batch.get(i));
            if (failure != null) {
              result.completeExceptionally(failure);
            } else {
              result.complete(((Number) renewed.get(i)).longValue() == 1L);
            }
          }
        });
  }

  @Override
  public CompletableFuture<Released> release(String resource, String value, long keepMillis) {
    Keys keys = keys(resource);
    return this.<String>run(
            Scripts.RELEASE,
            keys.lock(),
            List.of(keys.lock(), keys.channel(), keys.queue(), keys.waiting(), keys.counter()),
            RScript.ReturnType.VALUE,
            value,
            Long.toString(keepMillis),
            instance)
        .thenApply(RedisLeaseStore::released);
  }

  /** Parses the answer of the release and abandon scripts: "0", "1" or "1:lease id:token". */
  static Released released(String answer) {
    if ("0".equals(answer)) {
      return Released.NOT_HELD;
    }
    if ("1".equals(answer)) {
      return Released.FREED;
    }
    if (answer != null && answer.startsWith("1:")) {
      int colon = answer.lastIndexOf(':');
      if (colon > 2) {
        return new Released(
            true, answer.substring(2, colon), Long.parseLong(answer.substring(colon + 1)));
      }
    }
    throw new IllegalStateException("unexpected answer from the release script: " + answer);
  }

  @Override
  public CompletableFuture<Void> advanceFloor(String resource, long floor) {
    Keys keys = keys(resource);
    return this.<Long>run(
            Scripts.ADVANCE_FLOOR,
            keys.counter(),
            List.of(keys.counter()),
            RScript.ReturnType.LONG,
            Long.toString(floor))
        .thenApply(counter -> null);
  }

  @Override
  public CompletableFuture<Subscription> subscribeReleases(
      String resource, ReleaseListener onRelease) {
    RTopic topic = redisson.getTopic(keys(resource).channel(), StringCodec.INSTANCE);
    return topic
        .addListenerAsync(String.class, (channel, message) -> announce(message, onRelease))
        .toCompletableFuture()
        .thenApply(
            listener ->
                new Subscription() {
                  private boolean cancelled;

                  @Override
                  public synchronized void cancel() {
                    if (!cancelled) {
                      cancelled = true;
                      topic.removeListenerAsync(listener);
                    }
                  }
                });
  }

  /**
   * Passes one message of a resource's channel on: {@code handoff:<lease id>:<token>} for a
   * hand-off; anything else (the released value, or what older versions send) means the lock was
   * freed.
   */
  private static void announce(String message, ReleaseListener listener) {
    if (message != null && message.startsWith(HANDOFF_PREFIX)) {
      int colon = message.lastIndexOf(':');
      if (colon > HANDOFF_PREFIX.length()) {
        try {
          listener.onRelease(
              message.substring(HANDOFF_PREFIX.length(), colon),
              Long.parseLong(message.substring(colon + 1)));
          return;
        } catch (NumberFormatException e) {
          // not ours: treated as a plain release below
        }
      }
    }
    listener.onRelease(null, 0);
  }

  @Override
  public String describe() {
    return description;
  }

  private <T> CompletableFuture<T> run(
      Scripts.Script lua,
      String routingKey,
      List<Object> keys,
      RScript.ReturnType returnType,
      Object... args) {
    return script
        .<T>evalShaAsync(routingKey, RScript.Mode.READ_WRITE, lua.sha(), returnType, keys, args)
        .toCompletableFuture()
        .exceptionallyCompose(
            failure ->
                isNoScript(failure)
                    ? script
                        .<T>evalAsync(
                            routingKey,
                            RScript.Mode.READ_WRITE,
                            lua.source(),
                            returnType,
                            keys,
                            args)
                        .toCompletableFuture()
                    : CompletableFuture.failedFuture(failure));
  }

  private static boolean isNoScript(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null && message.contains("NOSCRIPT")) {
        return true;
      }
    }
    return false;
  }

  private Keys keys(String resource) {
    String base = keyPrefix + "{" + resource + "}:";
    return new Keys(
        base + "lock", base + "token", base + "released", base + "queue", base + "waiting");
  }

  private static String newInstanceId() {
    byte[] bytes = new byte[8];
    INSTANCE_IDS.nextBytes(bytes);
    return java.util.HexFormat.of().formatHex(bytes);
  }

  private static String describe(Config config) {
    try {
      if (config.isSingleConfig()) {
        return "Redis at " + config.useSingleServer().getAddress();
      }
      if (config.isClusterConfig()) {
        return "Redis Cluster at " + config.useClusterServers().getNodeAddresses();
      }
      if (config.isSentinelConfig()) {
        return "Redis via Sentinels " + config.useSentinelServers().getSentinelAddresses();
      }
    } catch (RuntimeException e) {
      // fall through: a configuration we cannot read still gets a generic name
    }
    return "Redis";
  }

  /** The Redis keys of one resource, all in one hash slot. */
  private record Keys(String lock, String counter, String channel, String queue, String waiting) {
    String abandoned(String leaseId) {
      return lock.substring(0, lock.length() - "lock".length()) + "abandoned:" + leaseId;
    }
  }
}
