package dev.fencing.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The rows of a guarded batch, server-prepared on MariaDB: every re-execution of the prepared
 * statement takes the fence row in share mode again, in the transaction it runs in, without the
 * batch's verify (what the rows sent after a mid-batch rollback rely on: they run in a new
 * transaction). Control: the same statement without {@code LOCK IN SHARE MODE} lets a registration
 * through at READ COMMITTED.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbServerPrepareTest {

  static final String ROOT_URL =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  private String database;
  private String update;

  @BeforeAll
  void setUp() throws SQLException {
    database =
        ("fjsp_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10))
            .toLowerCase(Locale.ROOT);
    exec(
        "CREATE DATABASE " + database,
        "CREATE TABLE "
            + database
            + ".fence (resource VARCHAR(200) PRIMARY KEY, token BIGINT NOT NULL,"
            + " lease_id VARCHAR(128) NOT NULL) ENGINE=InnoDB",
        "INSERT INTO " + database + ".fence VALUES ('job', 7, 'L7')",
        "CREATE TABLE "
            + database
            + ".a (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL, fence_token BIGINT NOT NULL"
            + " DEFAULT 0, fence_resource VARCHAR(200)) ENGINE=InnoDB",
        "INSERT INTO " + database + ".a (id, balance) VALUES (1, 0), (2, 0), (3, 0)");
    update =
        "UPDATE "
            + database
            + ".a SET balance = balance + ?, fence_token = 7, fence_resource = 'job'"
            + " WHERE (id = ?) AND (fence_token <= 7 OR fence_resource <> 'job')"
            + " AND EXISTS (SELECT 1 FROM "
            + database
            + ".fence f WHERE f.resource = 'job' AND f.token = 7 AND f.lease_id = 'L7'"
            + " LOCK IN SHARE MODE)";
  }

  @AfterAll
  void tearDown() throws SQLException {
    exec("DROP DATABASE IF EXISTS " + database);
  }

  @Test
  void everyServerPreparedExecutionHoldsTheFenceRowUntilItsTransactionEnds() throws SQLException {
    assertThat(heldAfterBatches(update)).containsExactly(true, true, true);
  }

  @Test
  void withoutTheLockClauseARegistrationGoesThrough() throws SQLException {
    assertThat(heldAfterBatches(update.replace(" LOCK IN SHARE MODE", "")))
        .containsExactly(false, false, false);
  }

  /** Three transactions of a three-row batch; after each, whether a registration had to wait. */
  private boolean[] heldAfterBatches(String sql) throws SQLException {
    boolean[] held = new boolean[3];
    try (Connection writer = DriverManager.getConnection(ROOT_URL);
        Connection registrar = DriverManager.getConnection(ROOT_URL)) {
      writer.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      writer.setAutoCommit(false);
      try (PreparedStatement rows = MariaDbServerPrepare.prepare(writer, sql)) {
        assertThat(rows.isWrapperFor(org.mariadb.jdbc.ServerPreparedStatement.class)).isTrue();
        for (int round = 0; round < 3; round++) {
          for (long id = 1; id <= 3; id++) {
            rows.setLong(1, 1);
            rows.setLong(2, id);
            rows.addBatch();
          }
          assertThat(rows.executeBatch()).containsExactly(1, 1, 1);
          held[round] = registrationWaits(registrar);
          writer.commit();
        }
      }
    }
    return held;
  }

  private boolean registrationWaits(Connection registrar) throws SQLException {
    try (Statement s = registrar.createStatement()) {
      s.execute(
          "SET STATEMENT innodb_lock_wait_timeout = 1 FOR UPDATE "
              + database
              + ".fence SET token = token WHERE resource = 'job'");
      return false;
    } catch (SQLException lockWaitTimeout) {
      assertThat(lockWaitTimeout.getErrorCode()).isEqualTo(1205);
      return true;
    }
  }

  private static void exec(String... sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(ROOT_URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    }
  }
}
