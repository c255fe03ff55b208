package dev.fencing.it.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Redis fail-overs that lose what the master acknowledged, with the fence on the shared PostgreSQL
 * (its own schemas per test):
 *
 * <ul>
 *   <li>the Sentinel promotes a lagging replica: A's lock and A's increment of the token counter
 *       are gone, so Redis grants the resource again, with A's token;
 *   <li>split brain: the old master comes back while the Sentinel is away and takes writes next to
 *       the promoted replica: two servers grant the same resource, each with its own counter.
 * </ul>
 *
 * Redis then has two holders; the fence lets exactly one of them write. Each scenario runs with
 * fencing off as a control, which must see both holders write.
 */
class RedisSentinelFailoverTest {

  private static final LeaseRequest LONG_LEASE =
      LeaseRequest.forLeaseTime(Duration.ofSeconds(30))
          .withoutRenewal()
          .withMaxWait(Duration.ofSeconds(10));

  private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  private final String schema = "sentinel_" + suffix;
  private final String fenceSchema = "sentinelf_" + suffix;
  private final String resource = "sentinel-" + suffix;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private RedisSentinelGroup group;
  private HikariDataSource pool;

  @BeforeEach
  void setUp() throws SQLException {
    pool = sharedPostgres();
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
      s.execute(
          "CREATE TABLE " + schema + ".writes (writer text PRIMARY KEY, token bigint NOT NULL)");
    }
    group = RedisSentinelGroup.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      try {
        closing.get(i).close();
      } catch (RuntimeException e) {
        // the next one still closes
      }
    }
    if (group != null) {
      group.close();
    }
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      s.execute("DROP SCHEMA IF EXISTS " + fenceSchema + " CASCADE");
    } finally {
      pool.close();
    }
  }

  private FencedDataSource fenced() {
    FencingMigrations.migrate(
        pool, MigrationOptions.builder().schema(fenceSchema).fence(schema + ".writes").build());
    return FencedDataSource.wrap(pool, FenceOptions.defaults().withSchema(fenceSchema));
  }

  private RedisLeaseManager plainLeases(RedissonClient redisson) {
    closing.add(redisson::shutdown);
    RedisLeaseManager manager = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
    closing.add(manager);
    return manager;
  }

  /** A write of {@code writer} under {@code lease}, guarded: refused unless the fence names it. */
  private void guardedWrite(FencedDataSource db, Lease lease, String writer) throws SQLException {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = db.getConnection();
              PreparedStatement insert =
                  GuardedStatements.insert(c, schema + ".writes", "writer", "token")) {
            insert.setString(1, writer);
            insert.setLong(2, lease.token().value());
            assertThat(insert.executeUpdate()).isEqualTo(1);
          }
        });
  }

  /** The same write without fencing, as a job with only a Redis lock does it. */
  private void plainWrite(DataSource db, Lease lease, String writer) throws SQLException {
    try (Connection c = db.getConnection();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO " + schema + ".writes (writer, token) VALUES (?, ?)")) {
      insert.setString(1, writer);
      insert.setLong(2, lease.token().value());
      insert.executeUpdate();
    }
  }

  private List<String> writers() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT writer FROM " + schema + ".writes ORDER BY writer")) {
      List<String> names = new ArrayList<>();
      while (r.next()) {
        names.add(r.getString(1));
      }
      return names;
    }
  }

  /** The token counter of the resource on {@code node}. */
  private long counterOn(RedisSentinelGroup.Node node) {
    String keys = node.cli("--scan", "--pattern", "*" + resource + "*token").trim();
    assertThat(keys).as("the counter key of %s", resource).isNotEmpty().doesNotContain("\n");
    return Long.parseLong(node.cli("GET", keys).trim());
  }

  /**
   * Acquires and releases once through the Sentinel, so that the counter exists on both servers,
   * then A acquires while the replica is paused, the master dies and the Sentinel promotes the
   * replica, which never saw A's lock or A's increment.
   */
  private Lease holderAForgottenByAFailOver(LeaseManager leases) {
    leases.acquire(resource, LONG_LEASE).close();
    RedisSentinelGroup.awaitReplicaCaughtUp(group.master(), group.replica());
    Lease[] a = new Lease[1];
    group.failOverToLaggingReplica(() -> a[0] = leases.acquire(resource, LONG_LEASE));
    return a[0];
  }

  // ---- the Sentinel promotes a lagging replica ----

  @Test
  void afterASentinelFailOverToALaggingReplicaTheDuplicateTokenIsRefusedAndOneHolderWrites()
      throws Exception {
    FencedDataSource db = fenced();
    LeaseManager leases =
        new FencedLeaseManager(plainLeases(group.connectViaSentinel()), db.fence());
    Lease a = holderAForgottenByAFailOver(leases);
    RedisSentinelGroup.Node promoted = group.master();
    long lostIncrement = a.token().value();
    assertThat(counterOn(promoted))
        .as("the promoted replica lost A's increment")
        .isLessThan(lostIncrement);

    Lease b = leases.acquire(resource, LONG_LEASE);

    assertThat(b.token().value())
        .as("B's token: Redis handed out A's token again, the fence refused it")
        .isGreaterThan(a.token().value());
    assertThat(counterOn(promoted))
        .as("the counter advanced past the fence")
        .isGreaterThanOrEqualTo(b.token().value());
    assertThatThrownBy(() -> guardedWrite(db, StaleViews.believedHeld(a), "A"))
        .isInstanceOf(StaleTokenException.class);
    guardedWrite(db, b, "B");
    assertThat(writers()).as("exactly one writer").containsExactly("B");
  }

  @Test
  void controlASentinelFailOverToALaggingReplicaHandsOutADuplicateTokenAndBothHoldersWrite()
      throws Exception {
    LeaseManager leases = plainLeases(group.connectViaSentinel());
    Lease a = holderAForgottenByAFailOver(leases);

    Lease b = leases.acquire(resource, LONG_LEASE);

    assertThat(a.isHeld()).as("A still holds its lease as far as it knows").isTrue();
    assertThat(b.token()).as("a duplicate token").isEqualTo(a.token());
    plainWrite(pool, a, "A");
    plainWrite(pool, b, "B");
    assertThat(writers()).containsExactly("A", "B");
  }

  // ---- split brain: two masters grant the same resource ----

  /**
   * The master is paused (a partition from everyone) and the Sentinel promotes the replica; then
   * the Sentinel itself is paused and the old master resumed, so it stays a master beside the new
   * one. A holds the resource on the old master (granted before the partition, and held on), B
   * acquires it on the new one.
   */
  private Lease[] twoHoldersInASplitBrain(LeaseManager onOld, LeaseManager onNew) {
    RedisSentinelGroup.Node old = group.master();
    RedisSentinelGroup.Node promoted = group.replica();
    onOld.acquire(resource, LONG_LEASE).close();
    onOld.acquire(resource, LONG_LEASE).close();
    RedisSentinelGroup.awaitReplicaCaughtUp(old, promoted);
    old.pause();
    group.awaitMaster(promoted);
    group.sentinel().pause();
    old.resume();
    assertThat(old.cli("ROLE")).as("two masters").startsWith("master");
    Lease b = onNew.acquire(resource, LONG_LEASE);
    Lease a = onOld.acquire(resource, LONG_LEASE);
    return new Lease[] {a, b};
  }

  @Test
  void inARedisSplitBrainBothMastersGrantTheLeaseAndOnlyOneHolderWrites() throws Exception {
    FencedDataSource db = fenced();
    RedisSentinelGroup.Node old = group.master();
    RedisSentinelGroup.Node promoted = group.replica();
    LeaseManager onOld =
        new FencedLeaseManager(plainLeases(RedisSentinelGroup.connectDirectly(old)), db.fence());
    LeaseManager onNew =
        new FencedLeaseManager(
            plainLeases(RedisSentinelGroup.connectDirectly(promoted)), db.fence());

    Lease[] holders = twoHoldersInASplitBrain(onOld, onNew);
    Lease a = holders[0];
    Lease b = holders[1];

    assertThat(a.token().value()).isGreaterThan(b.token().value());
    // Each write is judged by the fence: the holder registered with the higher token writes; the
    // other holder is refused, whichever order they come in.
    assertThatThrownBy(() -> guardedWrite(db, StaleViews.believedHeld(b), "B"))
        .isInstanceOf(StaleTokenException.class);
    guardedWrite(db, a, "A");
    assertThatThrownBy(() -> guardedWrite(db, StaleViews.believedHeld(b), "B2"))
        .isInstanceOf(StaleTokenException.class);
    assertThat(writers()).as("exactly one writer").containsExactly("A");
  }

  @Test
  void controlInARedisSplitBrainBothHoldersWrite() throws Exception {
    RedisSentinelGroup.Node old = group.master();
    RedisSentinelGroup.Node promoted = group.replica();
    LeaseManager onOld = plainLeases(RedisSentinelGroup.connectDirectly(old));
    LeaseManager onNew = plainLeases(RedisSentinelGroup.connectDirectly(promoted));

    Lease[] holders = twoHoldersInASplitBrain(onOld, onNew);

    assertThat(holders[0].isHeld()).isTrue();
    assertThat(holders[1].isHeld()).isTrue();
    plainWrite(pool, holders[0], "A");
    plainWrite(pool, holders[1], "B");
    assertThat(writers()).containsExactly("A", "B");
  }

  /** A pool on the shared PostgreSQL, failing with how to start it if it is not running. */
  private static HikariDataSource sharedPostgres() {
    String url =
        System.getProperty(
            "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(4);
    config.setConnectionTimeout(5_000);
    try {
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new AssertionError(
          "PostgreSQL is not reachable at "
              + url
              + "; start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql)"
              + " main start (or point -Dfencing.test.jdbc at another server)",
          e);
    }
  }
}
