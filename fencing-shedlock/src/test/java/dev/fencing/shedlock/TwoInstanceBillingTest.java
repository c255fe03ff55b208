package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The incident with ShedLock: the same {@code @SchedulerLock} billing job (run through ShedLock's
 * own {@link DefaultLockingTaskExecutor}, as its advice does) on two instances. Instance A charges
 * a few customers, then stalls past {@code lockAtMostFor}; instance B takes the lock and charges
 * everyone left; A resumes and charges the rest of the list it read before stalling. The job is an
 * unchanged DAO: plain SQL through the data source.
 */
class TwoInstanceBillingTest {

  private static final Duration LOCK_AT_MOST_FOR = Duration.ofMillis(600);
  private static final int CUSTOMERS = 20;
  private static final int CHARGED_BEFORE_STALL = 5;

  private static ShedLockFixture fx;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeAll
  static void setUp() {
    fx = new ShedLockFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  /** The DAO of the billing job: plain SQL, no fencing code. */
  private record BillingDao(DataSource db, String charges, long firstCustomer) {
    List<Long> uncharged() throws SQLException {
      try (Connection c = db.getConnection();
          PreparedStatement s =
              c.prepareStatement(
                  "SELECT id FROM "
                      + fx.table("customers")
                      + " WHERE id BETWEEN ? AND ? AND id NOT IN (SELECT customer_id FROM "
                      + charges
                      + ") ORDER BY id")) {
        s.setLong(1, firstCustomer);
        s.setLong(2, firstCustomer + CUSTOMERS - 1);
        List<Long> ids = new ArrayList<>();
        try (ResultSet rows = s.executeQuery()) {
          while (rows.next()) {
            ids.add(rows.getLong(1));
          }
        }
        return ids;
      }
    }

    void charge(long customer) throws SQLException {
      try (Connection c = db.getConnection();
          PreparedStatement s =
              c.prepareStatement(
                  "INSERT INTO " + charges + " (customer_id, amount) VALUES (?, 100)")) {
        s.setLong(1, customer);
        s.executeUpdate();
      }
    }
  }

  /** What the run left behind. */
  private record Outcome(long charges, long customersCharged, long doubleCharged, Throwable a) {}

  /**
   * Runs the two instances. With {@code checkedBeforeStall}, A's stall falls between its last local
   * check of the lease and its next write (so only the database can stop it); without, A's process
   * simply paused and its own lease view has expired when it resumes.
   */
  private Outcome run(
      LeaseManager leasesA,
      LeaseManager leasesB,
      DataSource db,
      String charges,
      long firstCustomer,
      boolean checkedBeforeStall)
      throws Exception {
    for (long id = firstCustomer; id < firstCustomer + CUSTOMERS; id++) {
      fx.exec("INSERT INTO " + fx.table("customers") + " VALUES (" + id + ")");
    }
    String lockName = "billing-nightly-" + firstCustomer;
    BillingDao dao = new BillingDao(db, charges, firstCustomer);
    LockingTaskExecutor instanceA =
        new DefaultLockingTaskExecutor(
            new FencedLockProvider(leasesA, FencedLockOptions.defaults()));
    LockingTaskExecutor instanceB =
        new DefaultLockingTaskExecutor(
            new FencedLockProvider(leasesB, FencedLockOptions.defaults()));
    CountDownLatch stalled = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);

    Future<?> a =
        threads.submit(
            () -> {
              rethrowing(
                  () ->
                      instanceA.executeWithLock(
                          (LockingTaskExecutor.Task)
                              () -> {
                                List<Long> todo = dao.uncharged();
                                for (long id : todo.subList(0, CHARGED_BEFORE_STALL)) {
                                  dao.charge(id);
                                }
                                Lease lease = Fencing.currentLease().orElseThrow();
                                Lease view =
                                    checkedBeforeStall ? StaleViews.believedHeld(lease) : lease;
                                stalled.countDown();
                                resume.await(); // the pause
                                Fencing.Work<SQLException> rest =
                                    () -> {
                                      for (long id :
                                          todo.subList(CHARGED_BEFORE_STALL, todo.size())) {
                                        dao.charge(id);
                                      }
                                    };
                                if (checkedBeforeStall) {
                                  Fencing.run(view, rest);
                                } else {
                                  rest.run(); // still in the provider's scope
                                }
                              },
                          config(lockName)));
              return null;
            });
    assertThat(stalled.await(10, TimeUnit.SECONDS)).isTrue();

    Future<Boolean> b =
        threads.submit(
            () -> {
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
              while (System.nanoTime() < deadline) {
                LockingTaskExecutor.TaskResult<Boolean> result =
                    rethrowing(
                        () ->
                            instanceB.executeWithLock(
                                () -> {
                                  for (long id : dao.uncharged()) {
                                    dao.charge(id);
                                  }
                                  return true;
                                },
                                config(lockName)));
                if (result.wasExecuted()) {
                  return true;
                }
                Thread.sleep(10);
              }
              return false;
            });
    assertThat(b.get(15, TimeUnit.SECONDS)).as("B ran the job").isTrue();
    resume.countDown();
    Throwable aFailure = null;
    try {
      a.get(15, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      aFailure = e.getCause();
    }
    String range =
        " WHERE customer_id BETWEEN " + firstCustomer + " AND " + (firstCustomer + CUSTOMERS - 1);
    Outcome outcome =
        new Outcome(
            fx.queryLong("SELECT count(*) FROM " + charges + range),
            fx.queryLong("SELECT count(DISTINCT customer_id) FROM " + charges + range),
            fx.queryLong(
                "SELECT count(*) FROM (SELECT customer_id FROM "
                    + charges
                    + range
                    + " GROUP BY customer_id HAVING count(*) > 1) d"),
            aFailure);
    System.out.printf(
        "two instances (%s): %d charges, %d customers, %d double-charged, A: %s%n",
        charges.endsWith("plain_charges")
            ? "no fencing"
            : checkedBeforeStall ? "fenced, stall after the local check" : "fenced, pause",
        outcome.charges(),
        outcome.customersCharged(),
        outcome.doubleCharged(),
        aFailure == null ? "completed" : aFailure.getClass().getSimpleName());
    return outcome;
  }

  /** ShedLock's executor declares {@code Throwable}; a task here throws exceptions only. */
  private interface ThrowingCall<T> {
    T call() throws Throwable;
  }

  private static <T> T rethrowing(ThrowingCall<T> call) throws Exception {
    try {
      return call.call();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

  private static void rethrowing(LockingTaskExecutor.Task task) throws Exception {
    rethrowing(
        () -> {
          task.call();
          return null;
        });
  }

  private static LockConfiguration config(String name) {
    return new LockConfiguration(ClockProvider.now(), name, LOCK_AT_MOST_FOR, Duration.ZERO);
  }

  @Test
  void theStalledInstancesWriteIsRejectedByTheDatabaseAndEveryCustomerIsChargedOnce()
      throws Exception {
    Outcome outcome =
        run(fx.fencedLeases(), fx.fencedLeases(), fx.db, fx.table("charges"), 1000, true);

    assertThat(outcome.a())
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> assertThat(e.getSQLState()).isEqualTo(StaleTokenException.SQL_STATE));
    assertThat(outcome.charges()).isEqualTo(CUSTOMERS);
    assertThat(outcome.customersCharged()).isEqualTo(CUSTOMERS);
    assertThat(outcome.doubleCharged()).isZero();
  }

  @Test
  void aPausedInstanceThatResumesIsRejectedAndEveryCustomerIsChargedOnce() throws Exception {
    Outcome outcome =
        run(fx.fencedLeases(), fx.fencedLeases(), fx.db, fx.table("charges"), 2000, false);

    assertThat(outcome.a())
        .as("its lease expired while it was paused: refused before reaching the database")
        .satisfiesAnyOf(
            e -> assertThat(e).isInstanceOf(LeaseLostException.class),
            e -> assertThat(e).hasRootCauseInstanceOf(LeaseLostException.class));
    assertThat(outcome.charges()).isEqualTo(CUSTOMERS);
    assertThat(outcome.doubleCharged()).isZero();
  }

  @Test
  void withoutFencingTheStalledInstanceDoubleCharges() throws Exception {
    Outcome outcome = run(fx.leases(), fx.leases(), fx.pool, fx.table("plain_charges"), 3000, true);

    assertThat(outcome.a()).isNull();
    assertThat(outcome.doubleCharged())
        .as("the violation fencing prevents")
        .isEqualTo(CUSTOMERS - CHARGED_BEFORE_STALL);
    assertThat(outcome.charges()).isEqualTo(2L * CUSTOMERS - CHARGED_BEFORE_STALL);
  }
}
