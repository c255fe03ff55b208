package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An unchanged DAO's plain SQL through the {@link FencedDataSource}, in default mode (the table has
 * no trigger): the stale holder's write is rewritten into the guarded form and rejected by the
 * database, a shape the rewriter cannot prove is refused before it is sent, and the current
 * holder's writes go through. The control shows the same plain SQL landing without the wrapper.
 */
class PlainSqlThroughTheDataSourceTest {

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  private static int plainUpdate(Lease lease, long id, String owner) throws Exception {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection();
              PreparedStatement update =
                  c.prepareStatement(
                      "UPDATE " + fx.table("accounts") + " SET owner = ? WHERE id = ?")) {
            update.setString(1, owner);
            update.setLong(2, id);
            return update.executeUpdate();
          }
        });
  }

  @Test
  void aStaleHoldersPlainUpdateIsRewrittenAndRejectedByTheDatabase() throws Exception {
    fx.insertAccount(1, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("plain");

    assertThatThrownBy(() -> plainUpdate(holders.stale(), 1, "A"))
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(1)).isEqualTo("nobody");

    assertThat(plainUpdate(holders.current(), 1, "B")).isEqualTo(1);
    assertThat(fx.ownerOf(1)).isEqualTo("B");
    assertThat(fx.queryLong("SELECT fence_token FROM " + fx.table("accounts") + " WHERE id = 1"))
        .isEqualTo(holders.current().token().value());
    holders.current().close();
  }

  /**
   * The ways to prepare a statement that pgjdbc supports (not column indexes); each must reject the
   * stale holder alike.
   */
  enum Prepare {
    SQL_ONLY {
      @Override
      PreparedStatement on(Connection c, String sql) throws SQLException {
        return c.prepareStatement(sql);
      }
    },
    GENERATED_KEYS {
      @Override
      PreparedStatement on(Connection c, String sql) throws SQLException {
        return c.prepareStatement(sql, Statement.NO_GENERATED_KEYS);
      }
    },
    COLUMN_NAMES {
      @Override
      PreparedStatement on(Connection c, String sql) throws SQLException {
        return c.prepareStatement(sql, new String[] {"id"});
      }
    },
    TYPE_AND_CONCURRENCY {
      @Override
      PreparedStatement on(Connection c, String sql) throws SQLException {
        return c.prepareStatement(sql, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
      }
    },
    TYPE_CONCURRENCY_AND_HOLDABILITY {
      @Override
      PreparedStatement on(Connection c, String sql) throws SQLException {
        return c.prepareStatement(
            sql,
            ResultSet.TYPE_FORWARD_ONLY,
            ResultSet.CONCUR_READ_ONLY,
            ResultSet.CLOSE_CURSORS_AT_COMMIT);
      }
    };

    abstract PreparedStatement on(Connection c, String sql) throws SQLException;
  }

  @ParameterizedTest
  @EnumSource(Prepare.class)
  void aStaleHoldersPlainUpdateIsRejectedHoweverItWasPrepared(Prepare prepare) throws Exception {
    long id = 40 + prepare.ordinal();
    fx.insertAccount(id, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("plain-" + prepare.name().toLowerCase());

    assertThatThrownBy(
            () ->
                Fencing.run(
                    holders.stale(),
                    () -> {
                      try (Connection c = fx.db.getConnection();
                          PreparedStatement update =
                              prepare.on(
                                  c,
                                  "UPDATE "
                                      + fx.table("accounts")
                                      + " SET owner = ? WHERE id = ?")) {
                        update.setString(1, "A");
                        update.setLong(2, id);
                        update.executeUpdate();
                      }
                    }))
        .as("a stale write that changed nothing is a rejection, not \"no such row\"")
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(id)).isEqualTo("nobody");
    holders.current().close();
  }

  @Test
  void aStaleHoldersPlainStatementIsRejectedToo() throws Exception {
    fx.insertAccount(2, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("plain-statement");

    assertThatThrownBy(
            () ->
                Fencing.run(
                    holders.stale(),
                    () -> {
                      try (Connection c = fx.db.getConnection();
                          Statement s = c.createStatement()) {
                        s.executeUpdate(
                            "UPDATE " + fx.table("accounts") + " SET owner = 'A' WHERE id = 2");
                      }
                    }))
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.ownerOf(2)).isEqualTo("nobody");
    holders.current().close();
  }

  @Test
  void aShapeTheRewriterCannotProveIsRefusedBeforeItIsSent() throws Exception {
    fx.insertAccount(3, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("plain-refused");

    assertThatThrownBy(
            () ->
                Fencing.run(
                    holders.current(),
                    () -> {
                      try (Connection c = fx.db.getConnection();
                          Statement s = c.createStatement()) {
                        s.executeUpdate(
                            "WITH x AS (SELECT 3 AS id) UPDATE "
                                + fx.table("accounts")
                                + " a SET owner = 'B' FROM x WHERE a.id = x.id");
                      }
                    }))
        .isInstanceOf(SQLFeatureNotSupportedException.class)
        .hasMessageContaining("GuardedStatements")
        .hasMessageContaining("withTriggerMode(true)");
    assertThat(fx.ownerOf(3)).isEqualTo("nobody");
    holders.current().close();
  }

  @Test
  void withoutTheWrapperTheStaleHoldersPlainUpdateLands() throws Exception {
    fx.insertAccount(4, "nobody", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent("plain-control");
    assertThat(fx.unguardedSetOwner(4, "A")).isEqualTo(1);
    assertThat(fx.ownerOf(4)).isEqualTo("A");
    holders.current().close();
  }
}
