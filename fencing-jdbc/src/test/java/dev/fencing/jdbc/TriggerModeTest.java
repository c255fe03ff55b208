package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Existing DAOs, unchanged: plain JDBC that knows nothing of fencing, writing to a table with the
 * enforcement trigger (strict mode), through a {@link FencedDataSource}.
 */
class TriggerModeTest {

  /** A DAO as teams write them: no fencing anywhere. */
  static final class AuditDao {
    private final DataSource dataSource;
    private final String table;

    AuditDao(DataSource dataSource, String table) {
      this.dataSource = dataSource;
      this.table = table;
    }

    void record(long id, String note) throws SQLException {
      try (Connection c = dataSource.getConnection();
          PreparedStatement insert =
              c.prepareStatement(
                  "INSERT INTO "
                      + table
                      + " (id, note) VALUES (?, ?)"
                      + " ON CONFLICT (id) DO UPDATE SET note = EXCLUDED.note")) {
        insert.setLong(1, id);
        insert.setString(2, note);
        insert.executeUpdate();
      }
    }
  }

  private static FencingFixture fx;
  private Lease stale;
  private Lease current;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @BeforeEach
  void staleAndCurrentHolders() {
    FencingFixture.Holders holders = fx.staleAndCurrent("audit");
    stale = holders.stale();
    current = holders.current();
  }

  @AfterEach
  void release() {
    current.close();
    fx.exec("ALTER TABLE " + fx.table("audited") + " DISABLE TRIGGER fencing_enforce");
    fx.exec("DELETE FROM " + fx.table("audited"));
    fx.exec("ALTER TABLE " + fx.table("audited") + " ENABLE TRIGGER fencing_enforce");
  }

  private String note(long id) {
    return fx.queryString("SELECT note FROM " + fx.table("audited") + " WHERE id = " + id)
        .orElse(null);
  }

  @Test
  void shouldLetTheCurrentHoldersPlainWritesThroughAndStampThem() throws Exception {
    AuditDao dao = new AuditDao(fx.triggerDb, fx.table("audited"));
    Fencing.run(current, () -> dao.record(1, "current"));
    assertThat(note(1)).isEqualTo("current");
    assertThat(fx.queryLong("SELECT fence_token FROM " + fx.table("audited") + " WHERE id = 1"))
        .isEqualTo(current.token().value());
  }

  @Test
  void shouldRejectTheStaleHoldersPlainWritesWithTheTypedException() throws Exception {
    AuditDao dao = new AuditDao(fx.triggerDb, fx.table("audited"));
    Fencing.run(current, () -> dao.record(2, "current"));

    assertThatThrownBy(() -> Fencing.run(stale, () -> dao.record(2, "stale")))
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.resource()).isEqualTo(current.resource());
              assertThat(e.attemptedToken()).isEqualTo(stale.token().value());
              assertThat(e.currentToken()).isEqualTo(current.token().value());
            });
    assertThatThrownBy(() -> Fencing.run(stale, () -> dao.record(3, "stale")))
        .isInstanceOf(StaleTokenException.class);
    assertThat(note(2)).isEqualTo("current");
    assertThat(note(3)).isNull();
  }

  @Test
  void withoutTheTriggerTheStalePlainWriteLands() throws Exception {
    AuditDao dao = new AuditDao(fx.triggerDb, fx.table("audited"));
    Fencing.run(current, () -> dao.record(4, "current"));
    fx.exec("ALTER TABLE " + fx.table("audited") + " DISABLE TRIGGER fencing_enforce");
    try {
      Fencing.run(stale, () -> dao.record(4, "stale"));
    } finally {
      fx.exec("ALTER TABLE " + fx.table("audited") + " ENABLE TRIGGER fencing_enforce");
    }
    assertThat(note(4)).as("the violation the trigger prevents").isEqualTo("stale");
  }

  @Test
  void strictModeShouldRejectAWriteOutsideAnyScope() {
    AuditDao dao = new AuditDao(fx.triggerDb, fx.table("audited"));
    assertThatThrownBy(() -> dao.record(5, "unfenced"))
        .isInstanceOf(SQLException.class)
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("ZF003"));
    assertThat(note(5)).isNull();
  }

  @Test
  void aRawPoolConnectionAfterAScopeDoesNotWriteAsTheLease() throws Exception {
    AuditDao fenced = new AuditDao(fx.triggerDb, fx.table("audited"));
    AuditDao raw = new AuditDao(fx.pool, fx.table("audited"));
    for (int i = 0; i < 3 * fx.pool.getMaximumPoolSize(); i++) {
      Fencing.run(current, () -> fenced.record(6, "current"));
      Fencing.run(
          current,
          () -> {
            try (Connection c = fx.triggerDb.getConnection()) {
              c.setAutoCommit(false);
              try (PreparedStatement insert =
                  c.prepareStatement(
                      "INSERT INTO "
                          + fx.table("audited")
                          + " VALUES (60, 'x') ON CONFLICT (id) DO NOTHING")) {
                insert.executeUpdate();
              }
              c.commit();
              c.setAutoCommit(true);
            }
          });
    }
    // every pooled connection that carried the lease is back in the pool; none carries it now
    for (int i = 0; i < 3 * fx.pool.getMaximumPoolSize(); i++) {
      assertThatThrownBy(() -> raw.record(7, "unfenced"))
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("ZF003"));
    }
    assertThat(note(7)).isNull();
  }

  @Test
  void shouldCarryTheSettingsInTheRoundTripOfTheFirstWriteAndNeverBeyondTheTransaction()
      throws Exception {
    AtomicInteger executions = new AtomicInteger();
    FencedDataSource counted =
        FencedDataSource.wrap(
            countingExecutions(fx.pool, executions),
            FenceOptions.defaults().withSchema(fx.fenceSchema).withTriggerMode(true));
    AuditDao warmUp = new AuditDao(counted, fx.table("audited"));
    Fencing.run(current, () -> warmUp.record(8, "warm-up"));

    int inTransaction = statementsFor(counted, executions, false);
    int inAutoCommit = statementsFor(counted, executions, true);
    System.out.printf(
        "[trigger mode] statements sent for 50 writes on one connection: %d in a transaction,"
            + " %d in auto-commit mode%n",
        inTransaction, inAutoCommit);
    // Every execution is one round trip: the first write of the transaction carries the settings
    // in front of it (settings; statement), and so does every auto-commit write, whose implicit
    // transaction ends the settings with it.
    assertThat(inTransaction).as("50 writes, the first carrying the settings").isEqualTo(50);
    assertThat(inAutoCommit).as("50 writes, each carrying its settings").isEqualTo(50);
  }

  @Test
  void aCarriedWriteLeavesNoSettingsOnTheConnectionAndAFailedOneWritesNothing() throws Exception {
    Fencing.run(
        current,
        () -> {
          try (Connection c = fx.triggerDb.getConnection()) {
            try (PreparedStatement insert =
                c.prepareStatement(
                    "INSERT INTO " + fx.table("audited") + " (id, note) VALUES (?, ?)")) {
              insert.setLong(1, 20);
              insert.setString(2, "carried");
              assertThat(insert.executeUpdate()).isEqualTo(1);
              // the results are the write's, not the settings'
              assertThat(insert.getUpdateCount()).isEqualTo(1);
              assertThat(insert.getResultSet()).isNull();
              assertThat(insert.getMoreResults()).isFalse();
              // the same id again: a duplicate key, in the carried statement's own transaction
              assertThatThrownBy(insert::executeUpdate).isInstanceOf(SQLException.class);
              insert.setLong(1, 21);
              assertThat(insert.executeLargeUpdate()).isEqualTo(1L);
            }
            // the driver's own connection, past the wrapper (which would carry the settings again)
            Connection raw = (Connection) c.unwrap(org.postgresql.PGConnection.class);
            try (Statement read = raw.createStatement();
                java.sql.ResultSet row =
                    read.executeQuery("SELECT current_setting('fencing.token', true)")) {
              row.next();
              assertThat(row.getString(1)).as("the settings ended with the write").isNullOrEmpty();
            }
            c.setAutoCommit(false);
            try (PreparedStatement update =
                c.prepareStatement(
                    "UPDATE " + fx.table("audited") + " SET note = ? WHERE id = ?")) {
              update.setString(1, "rolled back");
              update.setLong(2, 20);
              assertThat(update.executeUpdate()).isEqualTo(1);
              c.rollback();
              update.setString(1, "second transaction");
              assertThat(update.executeUpdate()).isEqualTo(1);
              c.commit();
            }
            c.setAutoCommit(true);
          }
        });
    assertThat(note(20)).isEqualTo("second transaction");
    assertThat(note(21)).isEqualTo("carried");
  }

  @Test
  void executeUpdateOfAQueryIsRefused() throws Exception {
    Fencing.run(
        current,
        () -> {
          try (Connection c = fx.triggerDb.getConnection();
              PreparedStatement query = c.prepareStatement("SELECT 1 WHERE ? = 1")) {
            query.setInt(1, 1);
            assertThatThrownBy(query::executeUpdate).isInstanceOf(SQLException.class);
            try (java.sql.ResultSet row = query.executeQuery()) {
              assertThat(row.next()).isTrue();
            }
          }
        });
  }

  private int statementsFor(DataSource dataSource, AtomicInteger executions, boolean autoCommit)
      throws Exception {
    int before = executions.get();
    Fencing.run(
        current,
        () -> {
          try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(autoCommit);
            for (int i = 0; i < 50; i++) {
              try (PreparedStatement insert =
                  c.prepareStatement(
                      "INSERT INTO "
                          + fx.table("audited")
                          + " (id, note) VALUES (?, 'n') ON CONFLICT (id) DO UPDATE SET note ="
                          + " EXCLUDED.note")) {
                insert.setLong(1, 1000 + i);
                insert.executeUpdate();
              }
            }
            if (!autoCommit) {
              c.commit();
            }
            c.setAutoCommit(true);
          }
        });
    return executions.get() - before;
  }

  /** Counts every statement execution on connections of {@code dataSource}. */
  private static DataSource countingExecutions(DataSource dataSource, AtomicInteger executions) {
    return (DataSource)
        Proxy.newProxyInstance(
            TriggerModeTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(dataSource, method, args);
              if (result instanceof Connection connection) {
                return countingConnection(connection, executions);
              }
              return result;
            });
  }

  private static Connection countingConnection(Connection connection, AtomicInteger executions) {
    return (Connection)
        Proxy.newProxyInstance(
            TriggerModeTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = invoke(connection, method, args);
              if (result instanceof Statement statement) {
                Class<?> face =
                    statement instanceof PreparedStatement
                        ? PreparedStatement.class
                        : Statement.class;
                return Proxy.newProxyInstance(
                    TriggerModeTest.class.getClassLoader(),
                    new Class<?>[] {face},
                    (p, m, a) -> {
                      if (m.getName().startsWith("execute")) {
                        executions.incrementAndGet();
                      }
                      return invoke(statement, m, a);
                    });
              }
              return result;
            });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
