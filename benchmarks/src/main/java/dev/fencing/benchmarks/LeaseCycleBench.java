package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import java.time.Duration;
import java.util.List;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * Benchmark 1: one lease cycle (acquire with a token, then release) per operation, each thread on
 * its own resource, for fencing and Redisson on the same Redisson client.
 */
final class LeaseCycleBench {

  static final String FLOOR = "2x EVALSHA (floor)";
  static final String FENCING = "fencing RedisLeaseManager";
  static final String RLOCK = "Redisson RLock";
  static final String RFENCED = "Redisson RFencedLock";

  /** The acquire script of fencing-core, byte for byte, so the floor runs the same server work. */
  static final String ACQUIRE =
      """
      if redis.call('exists', KEYS[3]) == 1 then
        return -1
      end
      if redis.call('exists', KEYS[1]) == 0 then
        local token = redis.call('incr', KEYS[2])
        redis.call('set', KEYS[1], ARGV[1] .. ':' .. token, 'px', ARGV[2])
        return token
      end
      local ttl = redis.call('pttl', KEYS[1])
      if ttl < 0 then ttl = 0 end
      return -ttl - 1
      """;

  /**
   * The release script of fencing-core without its hand-off to a queued waiter (a floor's release
   * has no queue to look at).
   */
  static final String RELEASE =
      """
      if redis.call('get', KEYS[1]) == ARGV[1] then
        if tonumber(ARGV[2]) > 0 then
          redis.call('pexpire', KEYS[1], ARGV[2])
        else
          redis.call('del', KEYS[1])
          redis.call('publish', KEYS[2], ARGV[1])
        end
        return 1
      end
      return 0
      """;

  private LeaseCycleBench() {}

  static Harness.GroupResult run(Env env, int threads, Harness.Timing timing) throws Exception {
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(env.prefix + "lc:");
    RScript script = env.redisson.getScript(StringCodec.INSTANCE);
    String acquireSha = script.scriptLoad(ACQUIRE);
    String releaseSha = script.scriptLoad(RELEASE);
    try (RedisLeaseManager leases = RedisLeaseManager.create(env.redisson, options)) {
      List<Harness.Variant> variants =
          List.of(
              new Harness.Variant(
                  FLOOR,
                  thread -> {
                    String base = env.prefix + "floor:{r" + thread + "}:";
                    List<Object> acquireKeys =
                        List.of(base + "lock", base + "token", base + "abandoned:" + thread);
                    List<Object> releaseKeys = List.of(base + "lock", base + "released");
                    String leaseId = "floor-" + thread;
                    return () -> {
                      Long token =
                          script.evalSha(
                              base + "lock",
                              RScript.Mode.READ_WRITE,
                              acquireSha,
                              RScript.ReturnType.LONG,
                              acquireKeys,
                              leaseId,
                              "30000");
                      Long deleted =
                          script.evalSha(
                              base + "lock",
                              RScript.Mode.READ_WRITE,
                              releaseSha,
                              RScript.ReturnType.LONG,
                              releaseKeys,
                              leaseId + ":" + token,
                              "0");
                      if (token <= 0 || deleted != 1L) {
                        throw new IllegalStateException("floor cycle failed");
                      }
                    };
                  }),
              new Harness.Variant(
                  FENCING,
                  thread -> {
                    String resource = "r" + thread;
                    LeaseRequest request =
                        LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
                            .withMaxWait(Duration.ofSeconds(5));
                    return () -> {
                      try (Lease lease = leases.acquire(resource, request)) {
                        if (lease.token().value() <= 0) {
                          throw new IllegalStateException("no token");
                        }
                      }
                    };
                  }),
              new Harness.Variant(
                  RLOCK,
                  thread -> {
                    RLock lock = env.redisson.getLock(env.prefix + "rlock:r" + thread);
                    return () -> {
                      lock.lock();
                      lock.unlock();
                    };
                  }),
              new Harness.Variant(
                  RFENCED,
                  thread -> {
                    RFencedLock lock =
                        env.redisson.getFencedLock(env.prefix + "rfenced:r" + thread);
                    return () -> {
                      Long token = lock.lockAndGetToken();
                      if (token == null || token <= 0) {
                        throw new IllegalStateException("no token");
                      }
                      lock.unlock();
                    };
                  }));
      return Harness.run("lease cycle", threads, timing, variants);
    }
  }
}
