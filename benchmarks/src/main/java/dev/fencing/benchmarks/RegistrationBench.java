package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.ResourceFence;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.redisson.api.RLock;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Acquire + register + release through {@link FencedLeaseManager}, against its floor written by
 * hand in the same run: fencing's acquire script, one one-row upsert of the fence row committed in
 * auto-commit (the registration's SQL, no settings, no transaction of its own), fencing's release
 * script. Between the two, the floor's upsert after an acquisition through {@code
 * RedisLeaseManager} (and before its release) tells how much of the gap the lease itself costs, and
 * how much the registration. Redisson's {@code RLock} lock + unlock is the reference without any
 * database. Each thread has its own resource.
 */
final class RegistrationBench {

  static final String FLOOR = "floor: acquire script + one upsert commit + release script";
  static final String LEASES_UPSERT =
      "RedisLeaseManager acquire + the floor's upsert commit + release";
  static final String FENCED = "FencedLeaseManager acquire + register + release";
  static final String RLOCK = "Redisson RLock lock + unlock (no database)";

  private RegistrationBench() {}

  /**
   * Runs the group.
   *
   * @param database "PostgreSQL" or "MariaDB", for the group's name
   * @param upsert the hand-written upsert: parameters resource, token, lease id
   */
  static Harness.GroupResult run(
      String database,
      RedissonClient redisson,
      String prefix,
      DataSource pool,
      ResourceFence fence,
      String upsert,
      int threads,
      Harness.Timing timing)
      throws Exception {
    RScript script = redisson.getScript(StringCodec.INSTANCE);
    String acquireSha = script.scriptLoad(LeaseCycleBench.ACQUIRE);
    String releaseSha = script.scriptLoad(LeaseCycleBench.RELEASE);
    LeaseOptions options = LeaseOptions.defaults().withKeyPrefix(prefix + "reg:");
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withMaxWait(Duration.ofSeconds(5));
    try (FencedLeaseManager leases =
            new FencedLeaseManager(RedisLeaseManager.create(redisson, options), fence);
        RedisLeaseManager plain =
            RedisLeaseManager.create(redisson, options.withKeyPrefix(prefix + "reglm:"))) {
      List<Harness.Variant> variants =
          List.of(
              new Harness.Variant(
                  FLOOR,
                  thread -> {
                    String resource = "reg-floor-" + thread;
                    String base = prefix + "regfloor:{" + resource + "}:";
                    List<Object> acquireKeys =
                        List.of(base + "lock", base + "token", base + "abandoned:" + thread);
                    List<Object> releaseKeys = List.of(base + "lock", base + "released");
                    String leaseId = "floor" + thread;
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
                      if (token == null || token <= 0) {
                        throw new IllegalStateException("floor acquire failed: " + token);
                      }
                      upsert(pool, upsert, resource, token, leaseId);
                      Long deleted =
                          script.evalSha(
                              base + "lock",
                              RScript.Mode.READ_WRITE,
                              releaseSha,
                              RScript.ReturnType.LONG,
                              releaseKeys,
                              leaseId + ":" + token,
                              "0");
                      if (deleted != 1L) {
                        throw new IllegalStateException("floor release failed");
                      }
                    };
                  }),
              new Harness.Variant(
                  LEASES_UPSERT,
                  thread -> {
                    String resource = "reg-lm-" + thread;
                    return () -> {
                      try (Lease lease = plain.acquire(resource, request)) {
                        upsert(pool, upsert, resource, lease.token().value(), lease.leaseId());
                      }
                    };
                  }),
              new Harness.Variant(
                  FENCED,
                  thread -> {
                    String resource = "reg-fenced-" + thread;
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
                    RLock lock = redisson.getLock(prefix + "reg-rlock:r" + thread);
                    return () -> {
                      lock.lock();
                      lock.unlock();
                    };
                  }));
      return Harness.run("registration, " + database, threads, timing, variants);
    }
  }

  /** The floor's registration: {@code upsert} on a pool connection in auto-commit. */
  private static void upsert(
      DataSource pool, String upsert, String resource, long token, String leaseId)
      throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement s = c.prepareStatement(upsert)) {
      s.setString(1, resource);
      s.setLong(2, token);
      s.setString(3, leaseId);
      s.execute();
    }
  }
}
