package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LossReason;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A stale holder (its lease still reports {@code isHeld()}, a successor registered) tries the
 * objects a fenced connection hands back and the execution paths whose rewritten plain write used
 * to come back as a silent zero. Every attempt must end refused, nothing may commit, and a refusal
 * by the database marks the lease lost. The control shows each write landing without the wrapper.
 */
class NothingGetsAroundTheWrapperTest {

  private static FencingFixture fx;
  private static int next;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  /** One stale writer: the real lease (to see it marked lost) and the view that believes it. */
  private record Stale(Lease real, Lease believed, Lease successor, long id) {}

  private static Stale staleHolder() {
    long id = ++next;
    fx.insertAccount(id, "nobody", 0);
    String resource = "around-" + id;
    FencedLeaseManager leases = fx.fencedLeases();
    Lease first = leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    fx.expireInRedis(resource);
    Lease successor = leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    return new Stale(first, FencingFixture.unawareOfLoss(first), successor, id);
  }

  private static String update(long id) {
    return "UPDATE " + fx.table("accounts") + " SET owner = 'stale' WHERE id = " + id;
  }

  private static void assertRejected(Stale stale, Fencing.Work<SQLException> write) {
    assertThatThrownBy(() -> Fencing.run(stale.believed(), write))
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(stale.id())).as("nothing committed").isEqualTo("nobody");
    assertThat(stale.real().lossReason()).contains(LossReason.SUPERSEDED);
    stale.successor().close();
  }

  @Test
  void theConnectionOfTheMetaDataIsTheFencedOne() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              Statement s = c.getMetaData().getConnection().createStatement()) {
            s.executeUpdate(update(stale.id()));
          }
        });
  }

  @Test
  void theStatementOfAResultSetIsTheFencedOne() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              Statement s = c.createStatement();
              ResultSet rs = s.executeQuery("SELECT 1")) {
            rs.getStatement().getConnection().createStatement().executeUpdate(update(stale.id()));
          }
        });
  }

  @Test
  void theResultSetOfAnArrayLeadsBackToNoDriverConnection() throws Exception {
    Stale stale = staleHolder();
    Fencing.run(
        stale.successor(),
        () -> {
          try (Connection c = fx.db.getConnection();
              ResultSet rs = c.createArrayOf("int4", new Object[] {1}).getResultSet()) {
            Statement owner = rs.getStatement();
            assertThat(owner == null ? c : owner.getConnection()).isSameAs(c);
          }
        });
    stale.successor().close();
  }

  @Test
  void anUpdatableResultSetCannotWriteAFencedRow() {
    Stale stale = staleHolder();
    assertThatThrownBy(
            () ->
                Fencing.run(
                    stale.believed(),
                    () -> {
                      try (Connection c = fx.db.getConnection();
                          Statement s =
                              c.createStatement(
                                  ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_UPDATABLE);
                          ResultSet rs =
                              s.executeQuery(
                                  "SELECT id, owner FROM "
                                      + fx.table("accounts")
                                      + " WHERE id = "
                                      + stale.id())) {
                        rs.next();
                        rs.updateString("owner", "stale");
                        rs.updateRow();
                      }
                    }))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("CONCUR_UPDATABLE");
    assertThat(fx.ownerOf(stale.id())).isEqualTo("nobody");
    stale.successor().close();
  }

  @Test
  void aBatchOfPlainStatementsIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              Statement s = c.createStatement()) {
            s.addBatch(update(stale.id()));
            s.executeBatch();
          }
        });
  }

  @Test
  void anUpdateReturningThroughStatementExecuteQueryIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              Statement s = c.createStatement();
              ResultSet rs = s.executeQuery(update(stale.id()) + " RETURNING id")) {
            rs.next();
          }
        });
  }

  @Test
  void anUpdateReturningThroughStatementExecuteIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              Statement s = c.createStatement()) {
            s.execute(update(stale.id()) + " RETURNING id");
          }
        });
  }

  @Test
  void anUpdateReturningThroughPreparedExecuteQueryIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              PreparedStatement s = c.prepareStatement(update(stale.id()) + " RETURNING id");
              ResultSet rs = s.executeQuery()) {
            rs.next();
          }
        });
  }

  @Test
  void anUpdateReturningThroughPreparedExecuteIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              PreparedStatement s = c.prepareStatement(update(stale.id()) + " RETURNING id")) {
            s.execute();
          }
        });
  }

  @Test
  void aPlainUpdateThroughPrepareCallIsRejected() {
    Stale stale = staleHolder();
    assertRejected(
        stale,
        () -> {
          try (Connection c = fx.db.getConnection();
              CallableStatement s = c.prepareCall(update(stale.id()))) {
            s.executeUpdate();
          }
        });
  }

  /**
   * Under REPEATABLE READ and SERIALIZABLE, the stale holder's transaction took its snapshot before
   * the successor registered: locking the moved fence row fails with a serialization failure
   * (40001), which is transient and would be retried. The fence names a newer holder, so it is a
   * rejection.
   */
  @ParameterizedTest
  @ValueSource(ints = {Connection.TRANSACTION_REPEATABLE_READ, Connection.TRANSACTION_SERIALIZABLE})
  void aSerializationFailureAfterTheFenceMovedIsARejection(int isolation) throws Exception {
    long id = ++next;
    fx.insertAccount(id, "nobody", 0);
    String resource = "around-" + id;
    FencedLeaseManager leases = fx.fencedLeases();
    Lease first = leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    Lease[] successor = new Lease[1];
    assertThatThrownBy(
            () ->
                Fencing.run(
                    FencingFixture.unawareOfLoss(first),
                    () -> {
                      try (Connection c = fx.db.getConnection()) {
                        c.setAutoCommit(false);
                        c.setTransactionIsolation(isolation);
                        try (Statement s = c.createStatement()) {
                          s.executeQuery("SELECT count(*) FROM " + fx.table("accounts")).close();
                          fx.expireInRedis(resource);
                          successor[0] =
                              leases.acquire(
                                  resource, FencingFixture.lease(Duration.ofSeconds(30)));
                          s.executeUpdate(update(id));
                        } finally {
                          c.rollback();
                        }
                      }
                    }))
        .isInstanceOf(StaleTokenException.class)
        .hasRootCauseInstanceOf(SQLException.class);
    assertThat(fx.ownerOf(id)).isEqualTo("nobody");
    assertThat(first.lossReason()).contains(LossReason.SUPERSEDED);
    successor[0].close();
  }

  @Test
  void withoutTheWrapperEachOfTheseWritesLands() throws Exception {
    Stale stale = staleHolder();
    try (Connection c = fx.pool.getConnection();
        Statement s = c.getMetaData().getConnection().createStatement()) {
      s.addBatch(update(stale.id()));
      assertThat(s.executeBatch()).containsExactly(1);
    }
    assertThat(fx.ownerOf(stale.id())).isEqualTo("stale");
    stale.successor().close();
  }
}
