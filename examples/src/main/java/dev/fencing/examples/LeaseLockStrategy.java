package dev.fencing.examples;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.StaleTokenException;
import java.sql.SQLException;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;

/**
 * Modes 3 and 4: a lease from fencing-core (random per-acquisition value, fencing token,
 * compare-and-delete release, heartbeat), checked before every customer.
 *
 * <ul>
 *   <li>{@link #tokenAndHeartbeat}: the fix the incident's team shipped. Nothing in the database
 *       knows about the lease.
 *   <li>{@link #fenced}: the same lease from a {@link FencedLeaseManager} (registered in the fence
 *       right after acquiring), every write transaction inside {@code Fencing.call(lease, ...)} on
 *       a connection from a {@link FencedDataSource}. With {@link FenceWrites#TRIGGER} the DAOs are
 *       unchanged: the enforcement trigger on {@code invoices} and {@code charges} checks the
 *       connection's lease against the fence; with {@link FenceWrites#GUARDED} (MariaDB) the DAO
 *       writes guarded statements, which carry the check themselves.
 * </ul>
 *
 * <p>Each run gets its own {@link RedisLeaseManager}, so its own heartbeat thread, as a worker
 * process would: {@link #stopHeartbeat} stops it, which is what a pause of the whole worker does.
 */
public final class LeaseLockStrategy implements LockStrategy {

  /** The resource the nightly billing job leases. */
  public static final String RESOURCE = "billing-nightly";

  private final RedissonClient redisson;
  private final LeaseOptions options;
  private final LeaseRequest request;
  private final String resource;
  private final FencedDataSource fenced;
  private final Map<String, RedisLeaseManager> heartbeats = new ConcurrentHashMap<>();

  private LeaseLockStrategy(
      RedissonClient redisson,
      LeaseOptions options,
      LeaseRequest request,
      String resource,
      FencedDataSource fenced) {
    this.redisson = Objects.requireNonNull(redisson);
    this.options = Objects.requireNonNull(options);
    this.request = Objects.requireNonNull(request);
    this.resource = Objects.requireNonNull(resource);
    this.fenced = fenced;
  }

  /** Mode 3: lease with token and heartbeat, no fencing. */
  public static LeaseLockStrategy tokenAndHeartbeat(
      RedissonClient redisson, LeaseOptions options, LeaseRequest request, String resource) {
    return new LeaseLockStrategy(redisson, options, request, resource, null);
  }

  /**
   * Mode 4: the lease registered in {@code db}'s fence; writes go through {@code db} inside {@code
   * Fencing.call}.
   */
  public static LeaseLockStrategy fenced(
      RedissonClient redisson,
      LeaseOptions options,
      LeaseRequest request,
      String resource,
      FencedDataSource db) {
    return new LeaseLockStrategy(redisson, options, request, resource, Objects.requireNonNull(db));
  }

  @Override
  public String name() {
    return fenced == null ? "lease (token + heartbeat)" : "fenced lease";
  }

  /** True for mode 4. */
  public boolean isFenced() {
    return fenced != null;
  }

  /**
   * Stops the heartbeat of the run {@code runId}, as a pause of its whole worker process would: its
   * lease is no longer renewed and expires in Redis after the lease time (closing the manager also
   * marks the real lease lost, but the worker only sees that at its next check). Does nothing if
   * the run holds no lease.
   */
  public void stopHeartbeat(String runId) {
    RedisLeaseManager manager = heartbeats.get(runId);
    if (manager != null) {
      manager.close();
    }
  }

  @Override
  public Optional<Hold> tryAcquire(String runId) {
    AtomicBoolean deletedOwnLock = new AtomicBoolean();
    RedisLeaseManager redis =
        RedisLeaseManager.create(
            redisson,
            options,
            new LeaseObserver() {
              @Override
              public void onReleased(Lease lease, boolean deleted) {
                deletedOwnLock.set(deleted);
              }
            });
    Optional<Lease> acquired;
    try {
      LeaseManager leases = fenced == null ? redis : new FencedLeaseManager(redis, fenced.fence());
      acquired = leases.tryAcquire(resource, request);
    } catch (RuntimeException e) {
      redis.close();
      throw e;
    }
    if (acquired.isEmpty()) {
      redis.close();
      return Optional.empty();
    }
    heartbeats.put(runId, redis);
    LastCheckedLease lease = new LastCheckedLease(acquired.get());
    return Optional.of(
        new Hold() {
          @Override
          public long token() {
            return lease.token().value();
          }

          @Override
          public boolean stillAllowed() {
            return lease.check();
          }

          @Override
          public DataSource dataSource(DataSource pool) {
            return fenced == null ? pool : fenced;
          }

          @Override
          public <T> T write(SqlWork<T> work) throws SQLException {
            return fenced == null ? work.run() : Fencing.call(lease, work::run);
          }

          @Override
          public boolean isStaleWriteRejection(SQLException e) {
            return fenced != null && StaleTokenException.SQL_STATE.equals(e.getSQLState());
          }

          @Override
          public Release release() {
            try {
              lease.close();
            } finally {
              heartbeats.remove(runId);
              redis.close();
            }
            return deletedOwnLock.get() ? Release.OWN_LOCK_RELEASED : Release.NOTHING_RELEASED;
          }
        });
  }
}
