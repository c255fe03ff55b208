package dev.fencing.examples;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.api.RBucket;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Mode 2: the morning-after fix from the incident. {@code SET key "locked" NX PX ttl} before the
 * run, an unconditional {@code DEL key} after it. No heartbeat, no owner check.
 *
 * <p>The lock itself cannot tell holders apart (its value is a fixed placeholder). To count the
 * damage, the strategy keeps a separate <em>observer</em> key that each successful acquisition
 * overwrites with its run id; at release, a {@code DEL} that removed a key while the observer names
 * another run is counted as "deleted another run's lock". The lock logic never reads it.
 */
public final class NaiveRedisLockStrategy implements LockStrategy {

  /** The fixed value the incident's code stored in the lock key. */
  public static final String FIXED_VALUE = "locked";

  private final RBucket<String> lock;
  private final RBucket<String> lastAcquiredBy;
  private final Duration ttl;
  private final AtomicLong deletedOthersLocks = new AtomicLong();

  /**
   * @param redisson client
   * @param lockKey the lock key
   * @param ttl the lock's PX
   */
  public NaiveRedisLockStrategy(RedissonClient redisson, String lockKey, Duration ttl) {
    this.lock = redisson.getBucket(lockKey, StringCodec.INSTANCE);
    this.lastAcquiredBy =
        redisson.getBucket(lockKey + ":observer:last-acquired-by", StringCodec.INSTANCE);
    this.ttl = Objects.requireNonNull(ttl);
  }

  @Override
  public String name() {
    return "naive lock (SET NX PX, DEL)";
  }

  /** How many releases so far deleted a lock that another run had acquired. */
  public long deletedOthersLocks() {
    return deletedOthersLocks.get();
  }

  @Override
  public Optional<Hold> tryAcquire(String runId) {
    if (!lock.setIfAbsent(FIXED_VALUE, ttl)) {
      return Optional.empty();
    }
    lastAcquiredBy.set(runId, ttl.multipliedBy(30));
    return Optional.of(
        () -> {
          String owner = lastAcquiredBy.get();
          boolean deleted = lock.delete();
          if (!deleted) {
            return Release.NOTHING_RELEASED;
          }
          if (owner != null && !owner.equals(runId)) {
            deletedOthersLocks.incrementAndGet();
            return Release.DELETED_ANOTHER_RUNS_LOCK;
          }
          return Release.OWN_LOCK_RELEASED;
        });
  }
}
