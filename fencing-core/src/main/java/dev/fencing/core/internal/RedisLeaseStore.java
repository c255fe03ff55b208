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
 * Leases in Redis: each operation is one atomic Lua script (see {@link Scripts}); waiters are woken
 * through a pub/sub channel per resource. The keys of one resource share a hash slot, so the same
 * scripts run on Redis Cluster; renewals are grouped by slot.
 */
public final class RedisLeaseStore implements LeaseStore {

  private static final int MAX_RENEWALS_PER_CALL = 500;

  private final RedissonClient redisson;
  private final RScript script;
  private final String keyPrefix;
  private final boolean cluster;
  private final String description;

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
  public CompletableFuture<Boolean> abandon(String resource, String leaseId, long leaseMillis) {
    Keys keys = keys(resource);
    return this.<Long>run(
            Scripts.ABANDON,
            keys.lock(),
            List.of(keys.lock(), keys.abandoned(leaseId), keys.channel()),
            RScript.ReturnType.LONG,
            leaseId,
            Long.toString(leaseMillis))
        .thenApply(deleted -> deleted == 1L);
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
  public CompletableFuture<Boolean> release(String resource, String value, long keepMillis) {
    Keys keys = keys(resource);
    return this.<Long>run(
            Scripts.RELEASE,
            keys.lock(),
            List.of(keys.lock(), keys.channel()),
            RScript.ReturnType.LONG,
            value,
            Long.toString(keepMillis))
        .thenApply(released -> released == 1L);
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
  public CompletableFuture<Subscription> subscribeReleases(String resource, Runnable onRelease) {
    RTopic topic = redisson.getTopic(keys(resource).channel(), StringCodec.INSTANCE);
    return topic
        .addListenerAsync(String.class, (channel, message) -> onRelease.run())
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
    return new Keys(base + "lock", base + "token", base + "released");
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
  private record Keys(String lock, String counter, String channel) {
    String abandoned(String leaseId) {
      return lock.substring(0, lock.length() - "lock".length()) + "abandoned:" + leaseId;
    }
  }
}
