package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The SQL fragments of guarded statements stay in their place, and literals are left alone. */
class FragmentTest {

  private static FencingFixture fx;
  private static Lease stale;
  private static Lease current;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
    FencingFixture.Holders holders = fx.staleAndCurrent("fragments");
    stale = holders.stale();
    current = holders.current();
    for (long id = 1; id <= 3; id++) {
      fx.insertAccount(id, "none", 0);
    }
  }

  @AfterAll
  static void tearDown() {
    current.close();
    fx.close();
  }

  private static int update(Lease lease, String assignments, String condition) throws Exception {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection();
              PreparedStatement update =
                  GuardedStatements.update(c, fx.table("accounts"), assignments, condition)) {
            return update.executeUpdate();
          }
        });
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "owner = 'stale' -- done",
        "owner = 'stale' /* done */",
        "owner = 'stale'; DELETE FROM x",
        "owner = 'stale' WHERE true --",
        "owner = ('stale'",
      })
  void anAssignmentThatWouldEscapeItsPlaceIsRefused(String assignments) {
    assertThatThrownBy(() -> update(stale, assignments, "id = 1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("assignments");
    assertThat(fx.ownerOf(1)).isEqualTo("none");
  }

  @ParameterizedTest
  @ValueSource(strings = {"id = 1 --", "id = 1) OR (true", "id = 1 /*", "id = 1;", "(id = 1"})
  void aConditionThatWouldEscapeItsPlaceIsRefused(String condition) {
    assertThatThrownBy(() -> update(stale, "owner = 'stale'", condition))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("condition");
    assertThat(fx.ownerOf(1)).isEqualTo("none");
  }

  @Test
  void theIssuesReproducerIsRefusedAndWithoutTheCheckItWouldHaveWrittenEveryRow() {
    assertThatThrownBy(() -> update(stale, "owner = 'stale' -- done", "id = 1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(
            fx.queryLong("SELECT count(*) FROM " + fx.table("accounts") + " WHERE owner = 'stale'"))
        .isZero();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "owner = 'a;b'",
        "owner = 'it''s -- not a comment'",
        "owner = E'a\\';b'",
        "owner = $$x;y/*$$",
        "owner = $tag$ -- ; $$ $tag$",
        "\"owner\" = '(unbalanced in a literal'",
        "owner = (('a' || ';'))",
        "owner = 'x' || '-' || '-'",
      })
  void legitimateLiteralsAreAccepted(String assignments) throws Exception {
    assertThat(update(current, assignments, "id = 2")).isEqualTo(1);
  }

  @Test
  void aLiteralWithASemicolonIsWrittenAsIs() throws Exception {
    assertThat(update(current, "owner = 'a;b'", "id = 3")).isEqualTo(1);
    assertThat(fx.ownerOf(3)).isEqualTo("a;b");
  }
}
