package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A registration on a connection handed out in auto-commit mode (a pool's default) is one
 * statement: no transaction control, no auto-commit toggles, no separate settings query. It is
 * still a registration: committed when {@code register} returns, refused below or beside the fence.
 * A connection handed out with auto-commit off gets the registration committed, and is returned as
 * it came. The JDBC calls are counted by a pass-through wrapper around the real pool.
 */
class RegistrationRoundTripsTest {

  private static FencingFixture postgres;
  private static FencingFixture mariaDb;
  private static final AtomicInteger RESOURCES = new AtomicInteger();

  @BeforeAll
  static void setUp() {
    postgres = new FencingFixture();
    mariaDb = FencingFixture.onMariaDb();
  }

  @AfterAll
  static void tearDown() {
    postgres.close();
    mariaDb.close();
  }

  static Stream<String> databases() {
    return Stream.of("PostgreSQL", "MariaDB");
  }

  private static FencingFixture fx(String database) {
    return database.equals("MariaDB") ? mariaDb : postgres;
  }

  @ParameterizedTest
  @MethodSource("databases")
  void aRegistrationInAutoCommitModeIsOneStatementAndCommittedWhenItReturns(String database)
      throws Exception {
    FencingFixture fx = fx(database);
    Counting counting = new Counting(fx.pool, false);
    ResourceFence fence = new ResourceFence(counting, fx.db.fence().options());
    String resource = "round-trips-" + RESOURCES.incrementAndGet();
    fence.register(fx.leases().acquire("warm-" + resource, lease())); // the contract check
    counting.reset();
    Lease lease = fx.leases().acquire(resource, lease());

    fence.register(lease);

    assertThat(counting.executions.get()).as("statements executed").isEqualTo(1);
    assertThat(counting.commits.get()).as("commit calls").isZero();
    assertThat(counting.autoCommitChanges.get()).as("setAutoCommit calls").isZero();
    assertThat(fencedLeaseId(fx, resource)).isEqualTo(lease.leaseId());
  }

  @ParameterizedTest
  @MethodSource("databases")
  void aConnectionHandedOutWithAutoCommitOffGetsTheRegistrationCommitted(String database)
      throws Exception {
    FencingFixture fx = fx(database);
    Counting counting = new Counting(fx.pool, true);
    ResourceFence fence = new ResourceFence(counting, fx.db.fence().options());
    String resource = "auto-commit-off-" + RESOURCES.incrementAndGet();
    Lease lease = fx.leases().acquire(resource, lease());

    fence.register(lease);

    assertThat(fencedLeaseId(fx, resource)).isEqualTo(lease.leaseId());
    assertThat(counting.lastAutoCommitAtClose).as("auto-commit when handed back").isFalse();
  }

  @ParameterizedTest
  @MethodSource("databases")
  void aTokenNotAboveTheFenceIsRefusedAndARetryOfTheSameLeaseIsNot(String database)
      throws Exception {
    FencingFixture fx = fx(database);
    ResourceFence fence = fx.db.fence();
    String resource = "refused-" + RESOURCES.incrementAndGet();
    Lease base = fx.leases().acquire(resource, lease());
    Lease registered = new OtherLease(base, 5, "holder-5");
    fence.register(registered);
    fence.register(registered); // a retry after a lost reply

    Lease sameTokenOtherLease = new OtherLease(base, 5, "other-5");
    Lease lowerToken = new OtherLease(base, 4, "other-4");
    for (Lease stale : new Lease[] {sameTokenOtherLease, lowerToken}) {
      assertThatThrownBy(() -> fence.register(stale))
          .isInstanceOf(StaleTokenException.class)
          .satisfies(e -> assertThat(((StaleTokenException) e).currentToken()).isEqualTo(5L));
    }
    assertThat(fencedLeaseId(fx, resource)).isEqualTo(registered.leaseId());
  }

  private static dev.fencing.core.LeaseRequest lease() {
    return FencingFixture.lease(Duration.ofSeconds(30));
  }

  /** Read on a connection of its own: what is committed. */
  private static String fencedLeaseId(FencingFixture fx, String resource) {
    return fx.queryString(
            "SELECT lease_id FROM " + fx.fenceSchema + ".fence WHERE resource = '" + resource + "'")
        .orElseThrow();
  }

  /** The lease of {@code held}'s resource with another token and lease id, held. */
  private record OtherLease(Lease held, long value, String leaseId) implements Lease {
    @Override
    public String resource() {
      return held.resource();
    }

    @Override
    public dev.fencing.core.FencingToken token() {
      return dev.fencing.core.FencingToken.of(value);
    }

    @Override
    public Duration leaseTime() {
      return held.leaseTime();
    }

    @Override
    public boolean isHeld() {
      return true;
    }

    @Override
    public void checkHeld() {}

    @Override
    public java.util.Optional<dev.fencing.core.LossReason> lossReason() {
      return java.util.Optional.empty();
    }

    @Override
    public void onLoss(dev.fencing.core.LeaseLossListener listener) {}

    @Override
    public void markLost(dev.fencing.core.LossReason reason) {}

    @Override
    public void release(Duration keepLockedFor) {}

    @Override
    public void close() {}
  }

  /** Counts statement executions, commits and auto-commit changes; everything else passes. */
  private static final class Counting implements DataSource {
    private static final Set<String> EXECUTIONS =
        Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate", "executeBatch");

    private final DataSource pool;
    private final boolean autoCommitOff;
    final AtomicInteger executions = new AtomicInteger();
    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger autoCommitChanges = new AtomicInteger();
    volatile boolean lastAutoCommitAtClose = true;

    Counting(DataSource pool, boolean autoCommitOff) {
      this.pool = pool;
      this.autoCommitOff = autoCommitOff;
    }

    void reset() {
      executions.set(0);
      commits.set(0);
      autoCommitChanges.set(0);
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection real = pool.getConnection();
      if (autoCommitOff) {
        real.setAutoCommit(false);
      }
      return (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "commit" -> commits.incrementAndGet();
                  case "setAutoCommit" -> autoCommitChanges.incrementAndGet();
                  case "close" -> lastAutoCommitAtClose = real.getAutoCommit();
                  default -> {}
                }
                Object result = invoke(real, method, args);
                if (result instanceof PreparedStatement statement) {
                  return counted(statement, PreparedStatement.class);
                }
                if (result instanceof Statement statement) {
                  return counted(statement, Statement.class);
                }
                return result;
              });
    }

    private <T extends Statement> T counted(T statement, Class<T> type) {
      InvocationHandler handler =
          (proxy, method, args) -> {
            if (EXECUTIONS.contains(method.getName())) {
              executions.incrementAndGet();
            }
            return invoke(statement, method, args);
          };
      return type.cast(
          Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    @Override
    public Connection getConnection(String user, String password) {
      throw new UnsupportedOperationException();
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() {
      return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return pool.isWrapperFor(iface);
    }
  }
}
