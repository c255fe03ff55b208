package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * A charge whose COMMIT reply was lost, retried by the job under the same, still valid lease: the
 * fence accepts both attempts (both come from the current holder), so only the charge's idempotency
 * key keeps the customer from being charged twice.
 *
 * <p>The lost reply, made deterministic: the first attempt's COMMIT is held up inside PostgreSQL (a
 * deferred trigger of the test's on {@code charges} waits for an advisory lock the test holds)
 * until its connection's socket timeout fires, so the caller sees an I/O error and cannot know
 * whether the charge committed, while the server still commits it once the test lets it go. The
 * retry runs in the meantime, on another connection, with the same lease.
 */
class IdempotentRetryTest {

  private static final String PERIOD = "2026-03";
  private static final String RUN = "nightly-1";
  private static final InvoiceCalculator CALCULATOR = (customer, period) -> customer.amountCents();

  /** The advisory lock (two int keys) at which the charges' commits wait: random per test. */
  private final int gateKey1 = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);

  private final int gateKey2 = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
  private final String gate = gateKey1 + ", " + gateKey2;
  private final ExecutorService background = Executors.newSingleThreadExecutor();
  private TestServers.Db db;
  private HikariDataSource lossyPool;
  private RedissonClient redisson;
  private RedisLeaseManager redisLeases;
  private FencedDataSource fenced;
  private FencedDataSource lossy;
  private Lease lease;
  private Customer customer;

  @BeforeEach
  void setUp() throws Exception {
    TestServers.requireRedis();
    db = new TestServers.Db("idempotent_retry");
    db.schema.seedCustomers(1);
    String s = db.name();
    try (Connection c = db.pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE FUNCTION "
              + s
              + ".hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
              + " PERFORM pg_advisory_xact_lock("
              + gate
              + "); RETURN NULL; END $$");
      st.execute(
          "CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON "
              + s
              + ".charges DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "
              + s
              + ".hold_commit()");
      customer =
          new JdbcBillingDao(db.schema.database(), s).loadActiveNotInvoiced(c, PERIOD, 0, 1).get(0);
    }
    FenceOptions options = FenceWrites.TRIGGER.options(db.schema.fenceSchema());
    fenced = FencedDataSource.wrap(db.pool, options);
    // the first attempt's connections give up on a reply after 2 s
    lossyPool = Servers.pool(TestServers.JDBC + "&socketTimeout=2", "lossy", 2);
    lossy = FencedDataSource.wrap(lossyPool, options);
    redisson = Servers.redisson(TestServers.REDIS);
    redisLeases = RedisLeaseManager.create(redisson, LeaseOptions.defaults());
    lease =
        new FencedLeaseManager(redisLeases, fenced.fence())
            .acquire("billing-" + s, LeaseRequest.forLeaseTime(Duration.ofSeconds(60)));
  }

  @AfterEach
  void tearDown() throws Exception {
    background.shutdownNow();
    if (lease != null) {
      lease.close();
    }
    if (redisLeases != null) {
      redisLeases.close();
    }
    if (redisson != null) {
      redisson.shutdown();
    }
    if (lossyPool != null) {
      lossyPool.close();
    }
    if (db != null) {
      db.close();
    }
  }

  private BillingDao.Outcome bill(DataSource source, JdbcBillingDao dao) throws SQLException {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = source.getConnection()) {
            return dao.billCustomer(c, customer, PERIOD, RUN, CALCULATOR);
          }
        });
  }

  /**
   * Holds every charge's COMMIT at the gate, makes the first attempt (its reply is lost), starts
   * the retry, waits until the retry is stuck where {@code retryStuck} says, opens the gate;
   * returns the retry's outcome.
   */
  private BillingDao.Outcome chargeWithLostReplyThenRetry(JdbcBillingDao dao, String retryStuck)
      throws Exception {
    try (Connection admin = db.pool.getConnection()) {
      query(admin, "SELECT pg_advisory_lock(" + gate + ")");
      assertThatThrownBy(() -> bill(lossy, dao))
          .as("the first attempt's caller sees its COMMIT fail")
          .isInstanceOf(SQLException.class);
      await(admin, gateWaiters(), 1, "the first attempt's COMMIT waits at the gate");
      assertThat(chargesOfCustomer()).as("nothing is visible yet").isZero();

      Future<BillingDao.Outcome> retry = background.submit(() -> bill(fenced, dao));
      if (retryStuck.equals("gate")) {
        await(admin, gateWaiters(), 2, "the retry's COMMIT waits at the gate too");
      } else {
        await(admin, keyWaiters(), 1, "the retry's charge waits for the first attempt's key");
      }
      query(admin, "SELECT pg_advisory_unlock(" + gate + ")");
      return retry.get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aRetryOfAChargeWhoseReplyWasLostDoesNotChargeTwice() throws Exception {
    JdbcBillingDao dao = new JdbcBillingDao(db.schema.database(), db.name());

    // the retry's charge waits on the key's unique index for the first attempt's transaction
    BillingDao.Outcome retried = chargeWithLostReplyThenRetry(dao, "key");

    assertThat(retried).isEqualTo(BillingDao.Outcome.ALREADY_CHARGED);
    assertThat(chargesOfCustomer()).as("charges of the customer").isEqualTo(1);
    assertThat(lease.isHeld()).as("all of it under one valid lease").isTrue();
  }

  @Test
  void controlWithoutTheIdempotencyKeyTheRetryChargesTwiceUnderOneValidLease() throws Exception {
    JdbcBillingDao dao =
        new JdbcBillingDao(db.schema.database(), db.name()).withoutIdempotencyKeys();

    // nothing stops the retry: its COMMIT too waits at the gate
    BillingDao.Outcome retried = chargeWithLostReplyThenRetry(dao, "gate");

    assertThat(retried).isEqualTo(BillingDao.Outcome.CHARGED);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (chargesOfCustomer() < 2 && System.nanoTime() - deadline < 0) {
      Thread.sleep(20);
    }
    assertThat(chargesOfCustomer()).as("the first attempt committed too").isEqualTo(2);
    assertThat(lease.isHeld()).as("all of it under one valid lease").isTrue();
  }

  private long chargesOfCustomer() throws SQLException {
    try (Connection c = db.pool.getConnection();
        PreparedStatement count =
            c.prepareStatement(
                "SELECT count(*) FROM " + db.name() + ".charges WHERE customer_id = ?")) {
      count.setLong(1, customer.id());
      try (ResultSet r = count.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    }
  }

  /** Counts the backends waiting at the gate. */
  private String gateWaiters() {
    return "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        + " AND objsubid = 2 AND classid::bigint = "
        + gateKey1
        + " AND objid::bigint = "
        + gateKey2;
  }

  /** Counts this test's backends waiting for another transaction while writing a charge. */
  private String keyWaiters() {
    return "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        + " AND wait_event = 'transactionid' AND query LIKE '%"
        + db.name()
        + "%charges%'";
  }

  /** Waits until {@code sql} counts at least {@code n}. */
  private static void await(Connection c, String sql, int n, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (Long.parseLong(query(c, sql)) < n) {
      assertThat(System.nanoTime() - deadline).as(what).isNegative();
      Thread.sleep(20);
    }
  }

  private static String query(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getString(1);
    }
  }
}
