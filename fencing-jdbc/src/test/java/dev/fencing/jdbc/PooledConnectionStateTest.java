package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A connection handed back to the pool must be indistinguishable from one that never saw a scope:
 * no setting, timeout or marker of the library outlives the scope, in any transaction shape.
 */
class PooledConnectionStateTest {

  private static final int POOL_SIZE = 3;
  private static FencingFixture fx;
  private static HikariDataSource pool;
  private static Map<String, String> untouched;
  private static int resources;

  @BeforeAll
  static void setUp() throws SQLException {
    fx = new FencingFixture();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(FencingFixture.URL);
    config.setMaximumPoolSize(POOL_SIZE);
    config.setMinimumIdle(POOL_SIZE);
    config.setPoolName("fencing-pooled-state");
    pool = new HikariDataSource(config);
    untouched = everyPooledConnection().get(0);
  }

  @AfterAll
  static void tearDown() {
    pool.close();
    fx.close();
  }

  /** What a DAO does with a connection, in the shapes a pool sees. */
  enum Shape {
    AUTO_COMMIT,
    COMMIT,
    ROLLBACK,
    CLOSED_WITH_AUTO_COMMIT_OFF,
    CLOSED_AFTER_AN_ERROR,
    AUTO_COMMIT_THEN_TRANSACTION_CLOSED_WITHOUT_RESTORING
  }

  private static void work(Connection c, Shape shape, boolean trigger, long id)
      throws SQLException {
    switch (shape) {
      case AUTO_COMMIT -> write(c, trigger, id);
      case COMMIT -> {
        c.setAutoCommit(false);
        write(c, trigger, id);
        c.commit();
        c.setAutoCommit(true);
      }
      case ROLLBACK -> {
        c.setAutoCommit(false);
        write(c, trigger, id);
        c.rollback();
        c.setAutoCommit(true);
      }
      case CLOSED_WITH_AUTO_COMMIT_OFF -> {
        c.setAutoCommit(false);
        write(c, trigger, id);
      }
      case CLOSED_AFTER_AN_ERROR -> {
        c.setAutoCommit(false);
        write(c, trigger, id);
        try (Statement s = c.createStatement()) {
          assertThatThrownBy(() -> s.execute("SELECT 1 / 0")).isInstanceOf(SQLException.class);
        }
      }
      case AUTO_COMMIT_THEN_TRANSACTION_CLOSED_WITHOUT_RESTORING -> {
        write(c, trigger, id);
        c.setAutoCommit(false);
        write(c, trigger, id + 1);
        c.commit();
      }
    }
  }

  private static void write(Connection c, boolean trigger, long id) throws SQLException {
    if (trigger) {
      try (PreparedStatement insert =
          c.prepareStatement(
              "INSERT INTO "
                  + fx.table("audited")
                  + " (id, note) VALUES (?, 'fenced') ON CONFLICT (id) DO NOTHING")) {
        insert.setLong(1, id);
        insert.executeUpdate();
      }
    } else {
      try (PreparedStatement insert =
          GuardedStatements.upsert(
              c, fx.table("accounts"), List.of("id", "owner", "balance"), List.of("id"))) {
        insert.setLong(1, id);
        insert.setString(2, "fenced");
        insert.setLong(3, 0);
        insert.executeUpdate();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Shape.class)
  void noPooledConnectionKeepsAnythingOfTheScope(Shape shape) throws Exception {
    Lease lease =
        fx.fencedLeases()
            .acquire("pooled-" + ++resources, FencingFixture.lease(Duration.ofSeconds(30)));
    long id = 1000L * (shape.ordinal() + 1);
    for (boolean trigger : new boolean[] {false, true}) {
      FencedDataSource db =
          FencedDataSource.wrap(
              pool, FenceOptions.defaults().withSchema(fx.fenceSchema).withTriggerMode(trigger));
      for (int round = 0; round < 2 * POOL_SIZE; round++) {
        long rowId = id + 10L * round + (trigger ? 5 : 0);
        Fencing.run(
            lease,
            () -> {
              try (Connection c = db.getConnection()) {
                work(c, shape, trigger, rowId);
              }
            });
      }
    }
    for (Map<String, String> settings : everyPooledConnection()) {
      assertThat(settings).as("SHOW ALL after %s", shape).isEqualTo(untouched);
    }
    assertThat(rawStrictWritesAccepted()).as("unscoped raw writes on a strict table").isZero();
    lease.close();
  }

  @Test
  void theLeakedLeaseReproducerIsRefused() throws Exception {
    Lease lease =
        fx.fencedLeases()
            .acquire("pooled-" + ++resources, FencingFixture.lease(Duration.ofSeconds(30)));
    FencedDataSource db =
        FencedDataSource.wrap(
            pool, FenceOptions.defaults().withSchema(fx.fenceSchema).withTriggerMode(true));
    for (int round = 0; round < 2 * POOL_SIZE; round++) {
      long rowId = 500 + 2 * round;
      Fencing.run(
          lease,
          () -> {
            try (Connection c = db.getConnection()) {
              work(c, Shape.AUTO_COMMIT_THEN_TRANSACTION_CLOSED_WITHOUT_RESTORING, true, rowId);
            }
          });
    }
    assertThat(rawStrictWritesAccepted()).isZero();
    lease.close();
  }

  @ParameterizedTest
  @EnumSource(
      value = Shape.class,
      names = {"COMMIT", "AUTO_COMMIT"})
  void aTransactionHoldingTheFenceRowMayIdleNoLongerThanTheLeaseTime(Shape ignored)
      throws Exception {
    Lease lease =
        fx.fencedLeases()
            .acquire("pooled-" + ++resources, FencingFixture.lease(Duration.ofMillis(4321)));
    for (boolean trigger : new boolean[] {false, true}) {
      FencedDataSource db =
          FencedDataSource.wrap(
              pool, FenceOptions.defaults().withSchema(fx.fenceSchema).withTriggerMode(trigger));
      String bound =
          Fencing.call(
              lease,
              () -> {
                try (Connection c = db.getConnection()) {
                  c.setAutoCommit(false);
                  write(c, trigger, 9000 + (trigger ? 1 : 0));
                  try (Statement s = c.createStatement();
                      ResultSet row = s.executeQuery("SHOW idle_in_transaction_session_timeout")) {
                    row.next();
                    return row.getString(1);
                  } finally {
                    c.rollback();
                    c.setAutoCommit(true);
                  }
                }
              });
      assertThat(bound).as("trigger mode %s", trigger).isEqualTo("4321ms");
    }
    lease.close();
  }

  /** Tries an unscoped raw write on the strict table with every pooled connection at once. */
  private static int rawStrictWritesAccepted() throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    int accepted = 0;
    try {
      for (int i = 0; i < POOL_SIZE; i++) {
        borrowed.add(pool.getConnection());
      }
      for (Connection c : borrowed) {
        try (Statement s = c.createStatement()) {
          s.executeUpdate("INSERT INTO " + fx.table("audited") + " (id, note) VALUES (-1, 'raw')");
          accepted++;
          s.executeUpdate("DELETE FROM " + fx.table("audited") + " WHERE id = -1");
        } catch (SQLException e) {
          assertThat(e.getSQLState()).isEqualTo("ZF003");
        }
      }
    } finally {
      for (Connection c : borrowed) {
        c.close();
      }
    }
    return accepted;
  }

  /**
   * {@code SHOW ALL} of every pooled connection, borrowed at once. Left out: custom settings the
   * server keeps as empty placeholders once any transaction set them locally (empty is how the
   * enforcement trigger reads "not set"), and PL/pgSQL's own settings, which appear at their
   * defaults in any backend that ran a PL/pgSQL function such as the trigger.
   */
  private static List<Map<String, String>> everyPooledConnection() throws SQLException {
    List<Connection> borrowed = new ArrayList<>();
    List<Map<String, String>> all = new ArrayList<>();
    try {
      for (int i = 0; i < POOL_SIZE; i++) {
        borrowed.add(pool.getConnection());
      }
      for (Connection c : borrowed) {
        Map<String, String> settings = new TreeMap<>();
        try (Statement s = c.createStatement();
            ResultSet rows = s.executeQuery("SHOW ALL")) {
          while (rows.next()) {
            String name = rows.getString(1);
            String value = rows.getString(2);
            if (name.startsWith("fencing.") && (value == null || value.isEmpty())) {
              continue;
            }
            if (name.startsWith("plpgsql.")) {
              continue;
            }
            settings.put(name, value);
          }
        }
        all.add(settings);
      }
    } finally {
      for (Connection c : borrowed) {
        c.close();
      }
    }
    return all;
  }
}
