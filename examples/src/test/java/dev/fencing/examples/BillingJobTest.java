package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BillingJobTest {

  private static final String PERIOD = "2026-02";
  private static TestServers.Db db;

  @BeforeAll
  static void setUp() throws Exception {
    db = new TestServers.Db("billing_job_test");
    db.schema.seedCustomers(450); // 405 active
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (db != null) {
      db.close();
    }
  }

  @BeforeEach
  void reset() throws Exception {
    db.schema.resetBilling();
  }

  private static BillingDao dao(String kind) {
    BillingDatabase database = db.schema.database();
    return kind.equals("jooq")
        ? new JooqBillingDao(database, db.name())
        : new JdbcBillingDao(database, db.name());
  }

  @ParameterizedTest
  @ValueSource(strings = {"jdbc", "jooq"})
  void chargesEveryActiveCustomerOnceAndASecondRunChargesNobody(String kind) throws Exception {
    BillingJob job = new BillingJob(db.pool, dao(kind), new NoLockStrategy()).batchSize(50);

    RunResult first = job.run("first", PERIOD);
    BillingStats afterFirst = BillingStats.query(db.pool, db.name(), PERIOD);
    assertThat(afterFirst.activeCustomers()).isEqualTo(405);
    assertThat(afterFirst.charges()).isEqualTo(405);
    assertThat(afterFirst.customersCharged()).isEqualTo(405);
    assertThat(afterFirst.customersChargedTwice()).isZero();
    assertThat(afterFirst.activeNotCharged()).isZero();
    assertThat(first.charged()).isEqualTo(405);

    RunResult second = job.run("second", PERIOD);
    BillingStats afterSecond = BillingStats.query(db.pool, db.name(), PERIOD);
    assertThat(afterSecond).isEqualTo(afterFirst);
    assertThat(second.charged()).isZero();

    // Another period is billed independently.
    job.run("next-month", "2026-03");
    assertThat(BillingStats.query(db.pool, db.name(), "2026-03").charges()).isEqualTo(405);
    assertThat(BillingStats.query(db.pool, db.name(), PERIOD)).isEqualTo(afterFirst);
  }

  @ParameterizedTest
  @ValueSource(strings = {"jdbc", "jooq"})
  void theInTransactionCheckSkipsACustomerInvoicedAfterTheBatchWasLoaded(String kind)
      throws Exception {
    BillingDao dao = dao(kind);
    List<Customer> batch;
    try (var c = db.pool.getConnection()) {
      batch = dao.loadActiveNotInvoiced(c, PERIOD, 0, 3);
      assertThat(dao.billCustomer(c, batch.get(0), PERIOD, "x", InvoiceCalculator.planPrice()))
          .isEqualTo(BillingDao.Outcome.CHARGED);
      assertThat(dao.billCustomer(c, batch.get(0), PERIOD, "y", InvoiceCalculator.planPrice()))
          .isEqualTo(BillingDao.Outcome.ALREADY_INVOICED);
      assertThat(c.getAutoCommit()).isTrue();
      assertThat(dao.loadActiveNotInvoiced(c, PERIOD, 0, 3)).doesNotContain(batch.get(0));
      assertThat(dao.countActiveNotInvoiced(c, PERIOD)).isEqualTo(404);
    }
  }

  @Test
  void stopsWhenTheLockSaysNoAndCallsTheStallPointBeforeEachWriteAndReleasesOnce()
      throws Exception {
    AtomicInteger allowedChecks = new AtomicInteger();
    AtomicInteger releases = new AtomicInteger();
    AtomicInteger stalls = new AtomicInteger();
    LockStrategy tenCustomers =
        new LockStrategy() {
          @Override
          public String name() {
            return "ten customers";
          }

          @Override
          public Optional<Hold> tryAcquire(String runId) {
            return Optional.of(
                new Hold() {
                  @Override
                  public boolean stillAllowed() {
                    return allowedChecks.incrementAndGet() <= 10;
                  }

                  @Override
                  public Release release() {
                    releases.incrementAndGet();
                    return Release.OWN_LOCK_RELEASED;
                  }
                });
          }
        };
    RunResult r =
        new BillingJob(db.pool, dao("jdbc"), tenCustomers)
            .stallPoint((runId, done, next) -> stalls.incrementAndGet())
            .progressEvery(Duration.ZERO)
            .run("limited", PERIOD);

    assertThat(r.charged()).isEqualTo(10);
    assertThat(r.stoppedEarly()).isEqualTo("lost the lock");
    assertThat(stalls).hasValue(10);
    assertThat(releases).hasValue(1);
    assertThat(BillingStats.query(db.pool, db.name(), PERIOD).charges()).isEqualTo(10);
  }

  @Test
  void aRunThatCannotAcquireDoesNothing() throws Exception {
    LockStrategy taken =
        new LockStrategy() {
          @Override
          public String name() {
            return "taken";
          }

          @Override
          public Optional<Hold> tryAcquire(String runId) {
            return Optional.empty();
          }
        };
    RunResult r = new BillingJob(db.pool, dao("jooq"), taken).run("late", PERIOD);
    assertThat(r.acquired()).isFalse();
    assertThat(BillingStats.query(db.pool, db.name(), PERIOD).charges()).isZero();
  }
}
