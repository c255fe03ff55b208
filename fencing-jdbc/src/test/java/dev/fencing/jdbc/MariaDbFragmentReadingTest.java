package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link GuardedStatements} fragments that MariaDB reads differently from PostgreSQL: {@code #}
 * starts a comment, and a backslash escapes the next character in both kinds of quotes. A stale
 * holder's fragment must never comment out, or quote away, the guards; with fencing off the same
 * assignment changes the successor's rows.
 */
class MariaDbFragmentReadingTest {

  private static FencingFixture fx;
  private Lease stale;

  @BeforeAll
  static void setUp() {
    fx = FencingFixture.onMariaDb();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @BeforeEach
  void seed() {
    stale = fx.staleAndCurrent("fragment").stale();
    fx.exec(
        "DELETE FROM " + fx.table("accounts"),
        "INSERT INTO "
            + fx.table("accounts")
            + " (id, owner, balance) VALUES (1, 'successor', 0),"
            + " (2, 'successor', 0)");
  }

  private static String rows() {
    return fx.queryString(
            "SELECT GROUP_CONCAT(CONCAT_WS('|', id, owner, balance, fence_token) ORDER BY id) FROM "
                + fx.table("accounts"))
        .orElse("");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "owner = 'stale' # bump",
        "owner = 'x\\'' -- '",
        "owner = \"x\\\"\" -- \"",
        "owner = 'stale' -- \t",
        "owner = 'stale' /*! , balance = 7 */"
      })
  void aFragmentCannotCommentOutTheGuards(String assignments) throws Exception {
    String before = rows();
    Throwable failure = null;
    try {
      Fencing.run(
          stale,
          () -> {
            try (Connection c = fx.db.getConnection();
                PreparedStatement update =
                    GuardedStatements.update(c, fx.table("accounts"), assignments, "id = 1")) {
              update.executeUpdate();
            }
          });
    } catch (Throwable refused) {
      failure = refused;
    }
    assertThat(rows())
        .as("after the stale attempt, which ended with %s", failure)
        .isEqualTo(before);

    try (Connection c = fx.pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("UPDATE " + fx.table("accounts") + " SET " + assignments + "\nWHERE id = 1");
    }
    assertThat(rows()).as("the same assignment with fencing off").isNotEqualTo(before);
  }

  @org.junit.jupiter.api.Test
  void aReadFollowedByAWriteInOneStringIsNotARead() throws Exception {
    com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
    config.setJdbcUrl(fx.url + "&allowMultiQueries=true");
    config.setMaximumPoolSize(1);
    try (com.zaxxer.hikari.HikariDataSource multi =
        new com.zaxxer.hikari.HikariDataSource(config)) {
      FencedDataSource through =
          FencedDataSource.wrap(multi, FenceOptions.defaults().withSchema(fx.fenceSchema));
      String sql = "SELECT 1; UPDATE " + fx.table("accounts") + " SET owner = 'stale'";
      String before = rows();
      try {
        Fencing.run(
            stale,
            () -> {
              try (Connection c = through.getConnection();
                  Statement s = c.createStatement()) {
                s.execute(sql);
              }
            });
      } catch (Exception refused) {
        // refused before it was sent
      }
      assertThat(rows()).isEqualTo(before);
      try (Connection c = multi.getConnection();
          Statement s = c.createStatement()) {
        s.execute(sql);
      }
      assertThat(rows()).as("with fencing off").isNotEqualTo(before);
    }
  }
}
