package dev.fencing.jdbc.interleaving;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLossListener;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LossReason;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Real PostgreSQL and Redis for one interleaving test class: its own table schema and fence schema
 * (dropped at the end), its own Redis key prefix, and the connections of the three sessions.
 *
 * <ul>
 *   <li>the <b>writer</b> (stale or current holder) borrows from {@link #pool}, a HikariCP pool of
 *       exactly one connection, through {@link #guardDb} or {@link #triggerDb}: a connection
 *       returned to the pool is the one borrowed next;
 *   <li>the <b>registrar</b> registers the successor with plain SQL on its own connection, so its
 *       UPDATE can be left in flight (done, not committed);
 *   <li>the <b>observer</b> reads tables, {@code pg_stat_activity} and seeds rows.
 * </ul>
 *
 * <p>Tables: {@code items(id, v)} is fenced (column only), {@code audited(id, v)} has the
 * enforcement trigger in strict mode, {@code lenient(id, v)} in lenient mode. All three also get a
 * nullable {@code fence_resource text} column, which the migrations module does not add yet: it is
 * where the resource that last wrote a row is expected once a table can be written under several
 * resources.
 */
final class InterleavingDb implements AutoCloseable {

  /** Leases of the suite: two minutes, renewed, no wait. */
  static final LeaseRequest LEASE = LeaseRequest.forLeaseTime(Duration.ofMinutes(2));

  static final String URL = Backend.POSTGRES.url;

  /** Longest wait for one step of a session; a step that takes longer fails the test. */
  static final Duration STEP_TIMEOUT = Duration.ofSeconds(20);

  /** The token of resource Y's holder in the two-resource layout: far above X's tokens. */
  static final long OTHER_RESOURCE_TOKEN = 1001;

  final Backend backend;
  final String schema;
  final String fenceSchema;
  final String prefix;
  final HikariDataSource pool;
  final FenceOptions options;
  final FencedDataSource guardDb;
  final FencedDataSource triggerDb;
  final RedissonClient redisson;
  final RedisLeaseManager leases;
  private final Connection registrar;
  private final Connection observer;
  private int resources;

  InterleavingDb() {
    this(Backend.POSTGRES);
  }

  InterleavingDb(Backend backend) {
    this.backend = backend;
    check(backend);
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    schema = ("il_" + suffix).toLowerCase(Locale.ROOT);
    fenceSchema = ("ilf_" + suffix).toLowerCase(Locale.ROOT);
    prefix = "il-" + suffix + ":";
    try {
      observer = DriverManager.getConnection(backend.url);
      registrar = DriverManager.getConnection(backend.url);
      registrar.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      registrar.setAutoCommit(false);
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
    exec(backend.createTables(schema).toArray(String[]::new));
    try (HikariDataSource migrating = pool(backend, suffix + "-migrations", 4)) {
      MigrationOptions.Builder migration =
          MigrationOptions.builder().schema(fenceSchema).fence(table("items"));
      if (backend == Backend.POSTGRES) {
        migration
            .enforce(table("audited"), EnforcementMode.STRICT)
            .enforce(table("lenient"), EnforcementMode.LENIENT);
      }
      FencingMigrations.migrate(migrating, migration.build());
    }
    pool = pool(backend, suffix, 1);
    options = FenceOptions.defaults().withSchema(fenceSchema);
    guardDb = FencedDataSource.wrap(pool, options);
    triggerDb = FencedDataSource.wrap(pool, options.withTriggerMode(true));
    redisson = RedisServers.connectShared();
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
  }

  private static HikariDataSource pool(Backend backend, String name, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(backend.url);
    config.setMaximumPoolSize(size);
    config.setConnectionTimeout(5_000);
    config.setPoolName("interleaving-" + name);
    return new HikariDataSource(config);
  }

  String table(String name) {
    return schema + "." + name;
  }

  String fenceTable() {
    return fenceSchema + ".fence";
  }

  // ---------------------------------------------------------------- holders

  /**
   * The two holders of one resource: {@code stale} (token t) registered first, then its lock
   * expired in Redis unnoticed, and {@code successor} (token t + 1) acquired it. The successor is
   * NOT registered yet: {@link #registration} does that step by step.
   */
  record Holders(String resource, Lease stale, Lease successor) implements AutoCloseable {
    @Override
    public void close() {
      successor.close();
      stale.close();
    }

    /**
     * A holder with the successor's token and another lease id, as when Redis handed out the same
     * token twice (a fail-over to a replica that missed increments): only the lease id tells it
     * from the registered successor.
     */
    Lease sameTokenOtherLease() {
      Lease twin = StaleViews.believedHeld(successor);
      return new Lease() {
        @Override
        public String resource() {
          return twin.resource();
        }

        @Override
        public FencingToken token() {
          return twin.token();
        }

        @Override
        public String leaseId() {
          return "twin-" + twin.leaseId();
        }

        @Override
        public Duration leaseTime() {
          return twin.leaseTime();
        }

        @Override
        public boolean isHeld() {
          return true;
        }

        @Override
        public void checkHeld() {}

        @Override
        public Optional<LossReason> lossReason() {
          return Optional.empty();
        }

        @Override
        public void onLoss(LeaseLossListener listener) {}

        @Override
        public void markLost(LossReason reason) {}

        @Override
        public void close() {}

        @Override
        public void release(Duration keepLockedFor) {}

        @Override
        public String toString() {
          return "same-token twin of " + twin;
        }
      };
    }
  }

  Holders holders() {
    String resource = "r" + ++resources;
    Lease first = leases.acquire(resource, LEASE);
    registerCommitted(resource, first.token().value(), first.leaseId());
    redisson.getBucket(prefix + "{" + resource + "}:lock", StringCodec.INSTANCE).delete();
    Lease successor = leases.acquire(resource, LEASE);
    return new Holders(resource, StaleViews.believedHeld(first), successor);
  }

  /** Writes a fence row with plain SQL, committed: a registration that is already done. */
  void registerCommitted(String resource, long token, String leaseId) {
    try (PreparedStatement insert = observer.prepareStatement(backend.upsertFence(fenceTable()))) {
      insert.setString(1, resource);
      insert.setLong(2, token);
      insert.setString(3, leaseId);
      insert.executeUpdate();
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  /** The successor's registration, run on the registrar's own connection. */
  Registration registration(Holders holders) {
    return new Registration(holders.resource(), holders.successor());
  }

  /**
   * A registration in two steps: {@link #start()} runs its UPDATE (the fence row is then locked by
   * an uncommitted transaction), {@link #commit} snapshots the given rows inside the same
   * transaction and commits. The snapshot is exactly what was committed before the registration.
   */
  final class Registration {
    private final String resource;
    private final Lease successor;
    private boolean started;
    private volatile boolean committed;

    private Registration(String resource, Lease successor) {
      this.resource = resource;
      this.successor = successor;
    }

    void start() throws SQLException {
      try (Statement timeout = registrar.createStatement()) {
        timeout.execute(backend.registrarLockTimeout(STEP_TIMEOUT.toMillis()));
      }
      started = true;
      try (PreparedStatement update =
          registrar.prepareStatement(
              "UPDATE "
                  + fenceTable()
                  + " SET token = ?, lease_id = ?, registered_at = now()"
                  + " WHERE resource = ? AND token < ?")) {
        update.setLong(1, successor.token().value());
        update.setString(2, successor.leaseId());
        update.setString(3, resource);
        update.setLong(4, successor.token().value());
        if (update.executeUpdate() != 1) {
          throw new AssertionError("the successor's registration updated no fence row");
        }
      }
    }

    Map<Long, RowState> commit(String table, long fromId, long toId) throws SQLException {
      Map<Long, RowState> before = rows(registrar, table, fromId, toId);
      committed = true;
      registrar.commit();
      started = false;
      return before;
    }

    Map<Long, RowState> startAndCommit(String table, long fromId, long toId) throws SQLException {
      start();
      return commit(table, fromId, toId);
    }

    boolean committed() {
      return committed;
    }

    void abandon() {
      if (started) {
        started = false;
        try {
          registrar.rollback();
        } catch (SQLException e) {
          throw new AssertionError(e.getMessage(), e);
        }
      }
    }
  }

  // ---------------------------------------------------------------- rows

  /** One row as read back: its value, its fence token and the resource recorded with it. */
  record RowState(String v, long fenceToken, String resource) {
    @Override
    public String toString() {
      return "'" + v + "' token " + fenceToken + (resource == null ? "" : " of " + resource);
    }
  }

  Map<Long, RowState> rows(String table, long fromId, long toId) {
    try {
      return rows(observer, table, fromId, toId);
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private static Map<Long, RowState> rows(Connection c, String table, long fromId, long toId)
      throws SQLException {
    Map<Long, RowState> rows = new TreeMap<>();
    try (PreparedStatement read =
        c.prepareStatement(
            "SELECT id, v, fence_token, fence_resource FROM "
                + table
                + " WHERE id BETWEEN ? AND ? ORDER BY id")) {
      read.setLong(1, fromId);
      read.setLong(2, toId);
      try (ResultSet rs = read.executeQuery()) {
        while (rs.next()) {
          rows.put(rs.getLong(1), new RowState(rs.getString(2), rs.getLong(3), rs.getString(4)));
        }
      }
    }
    return rows;
  }

  /**
   * Inserts rows as if written by a holder of {@code resource} with {@code token} (0 and null:
   * never written by a holder). Bypasses the enforcement trigger, as a migration would.
   */
  void seed(String table, Iterable<Long> ids, long token, String resource) {
    try {
      observer.setAutoCommit(false);
      try (Statement role = observer.createStatement();
          PreparedStatement insert =
              observer.prepareStatement(
                  "INSERT INTO "
                      + table
                      + " (id, v, fence_token, fence_resource) VALUES (?, 'seed', ?, ?)")) {
        if (backend.seedBypassingTriggers() != null) {
          role.execute(backend.seedBypassingTriggers());
        }
        for (long id : ids) {
          insert.setLong(1, id);
          insert.setLong(2, token);
          insert.setString(3, resource);
          insert.addBatch();
        }
        insert.executeBatch();
        observer.commit();
      } finally {
        observer.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------- observing sessions

  /**
   * Waits until the backend {@code pid} waits for a lock, or {@code statement} finished without
   * waiting. Fails the test after {@link #STEP_TIMEOUT}.
   *
   * @return whether the backend was seen waiting for a lock
   */
  boolean awaitLockWaitOrDone(int pid, Future<?> statement) {
    long deadline = System.nanoTime() + STEP_TIMEOUT.toNanos();
    try {
      while (System.nanoTime() - deadline < 0) {
        if (statement.isDone()) {
          return false;
        }
        if (backend.waitsForLock(observer, pid)) {
          return true;
        }
        LockSupport.parkNanos(1_000_000);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
    throw new AssertionError(
        "backend " + pid + " neither waited for a lock nor finished within " + STEP_TIMEOUT);
  }

  /** Cancels whatever the backend {@code pid} is running (cleanup after a failed step). */
  void cancel(int pid) {
    if (pid == 0) {
      return;
    }
    try {
      backend.cancel(observer, pid);
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  /**
   * Borrows a plain connection from the pool, as any unscoped DAO would, and reports fencing
   * settings it still carries from a scope; then clears them so the next test starts clean.
   *
   * @return what the pooled connection carried, if anything
   */
  Optional<String> settingsLeftInPool() {
    if (backend != Backend.POSTGRES) {
      return Optional.empty(); // nothing is ever set on a MariaDB session (no trigger mode)
    }
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(true);
      String left = null;
      try (Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT current_setting('fencing.resource', true),"
                      + " current_setting('fencing.token', true),"
                      + " current_setting('fencing.lease_id', true)")) {
        rs.next();
        if (!blank(rs.getString(1)) || !blank(rs.getString(2)) || !blank(rs.getString(3))) {
          left =
              "fencing.resource="
                  + rs.getString(1)
                  + " fencing.token="
                  + rs.getString(2)
                  + " fencing.lease_id="
                  + rs.getString(3);
        }
      }
      if (left != null) {
        try (Statement s = c.createStatement()) {
          s.execute(
              "SELECT set_config('fencing.resource', '', false),"
                  + " set_config('fencing.token', '', false),"
                  + " set_config('fencing.lease_id', '', false)");
        }
      }
      return Optional.ofNullable(left);
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  private static boolean blank(String s) {
    return s == null || s.isEmpty();
  }

  void exec(String... sql) {
    try (Statement s = observer.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  Optional<String> queryString(String sql) {
    try (Statement s = observer.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
    } catch (SQLException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    leases.close();
    redisson.getKeys().deleteByPattern(prefix + "*");
    pool.close();
    try {
      registrar.rollback();
      registrar.close();
    } catch (SQLException ignored) {
      // dropped with the schema below
    }
    exec(backend.dropSchema(schema), backend.dropSchema(fenceSchema));
    try {
      observer.close();
    } catch (SQLException ignored) {
      // nothing left to clean
    }
    redisson.shutdown();
  }

  static void checkPostgres() {
    check(Backend.POSTGRES);
  }

  static void check(Backend backend) {
    try (Connection c = DriverManager.getConnection(backend.url)) {
      c.isValid(2);
    } catch (SQLException e) {
      throw new AssertionError(
          backend.label
              + " is not reachable at "
              + backend.url
              + " ("
              + e.getMessage()
              + "); "
              + backend.howToStart,
          e);
    }
  }
}
