package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What each refusal says: one story, exact figures. */
class ErrorReportsTest {

  private static FencingFixture fx;
  private static int resources;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  private static String resource() {
    return "errors-" + ++resources;
  }

  @Test
  void aLeaseThatWasNeverRegisteredIsReportedAsSuchWithTheFencesToken() throws Exception {
    fx.insertAccount(1, "none", 0);
    String resource = resource();
    Lease registered =
        fx.fencedLeases().acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    fx.expireInRedis(resource);
    Lease unregistered =
        fx.leases().acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    assertThat(unregistered.token().value()).isGreaterThan(registered.token().value());

    assertThatThrownBy(() -> fx.guardedSetOwner(unregistered, 1, "unregistered"))
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(StaleTokenException.Reason.NOT_REGISTERED);
              assertThat(e.attemptedToken()).isEqualTo(unregistered.token().value());
              assertThat(e.currentToken()).isEqualTo(registered.token().value());
              assertThat(e.getMessage()).contains("never registered").doesNotContain("stale");
            });
    assertThat(fx.ownerOf(1)).isEqualTo("none");
  }

  @Test
  void aStaleWriteReportsTheFencesRealCurrentToken() throws Exception {
    fx.insertAccount(2, "none", 0);
    FencingFixture.Holders holders = fx.staleAndCurrent(resource());
    assertThatThrownBy(() -> fx.guardedSetOwner(holders.stale(), 2, "stale"))
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(StaleTokenException.Reason.SUPERSEDED);
              assertThat(e.attemptedToken()).isEqualTo(holders.stale().token().value());
              assertThat(e.currentToken()).isEqualTo(holders.current().token().value());
            });
  }

  @Test
  void aNullFragmentIsRefusedByName() throws Exception {
    Lease lease =
        fx.fencedLeases().acquire(resource(), FencingFixture.lease(Duration.ofSeconds(30)));
    Fencing.run(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection()) {
            assertThatThrownBy(
                    () -> GuardedStatements.update(c, fx.table("accounts"), null, "id = ?"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("assignments");
            assertThatThrownBy(
                    () -> GuardedStatements.update(c, fx.table("accounts"), "owner = ?", null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("condition");
            assertThatThrownBy(() -> GuardedStatements.delete(c, fx.table("accounts"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("condition");
          }
        });
  }

  /**
   * The scope refuses to start with the lease's own {@link LeaseLostException}; a JDBC call inside
   * it refuses with its SQL form, {@link LeaseLostSQLException} (SQLState ZF004, non-transient),
   * whose cause is that same report.
   */
  @Test
  void aLeaseKnownLostIsRefusedByTheScopeAndInsideJdbcCallsAsItsSqlForm() throws Exception {
    Lease lease =
        fx.fencedLeases().acquire(resource(), FencingFixture.lease(Duration.ofSeconds(30)));
    Connection c = Fencing.call(lease, () -> fx.db.getConnection());
    PreparedStatement prepared = c.prepareStatement("SELECT 1");
    lease.close();
    assertThatThrownBy(() -> Fencing.run(lease, () -> {})).isInstanceOf(LeaseLostException.class);
    for (ThrowingCallable call :
        List.<ThrowingCallable>of(
            () -> c.prepareStatement("SELECT 1"),
            prepared::executeQuery,
            () -> c.createStatement(),
            () -> GuardedStatements.update(c, fx.table("accounts"), "owner = ?", "id = ?"))) {
      assertThatThrownBy(call)
          .isInstanceOfSatisfying(
              LeaseLostSQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("ZF004"))
          .hasCauseInstanceOf(LeaseLostException.class);
    }
    c.close();
  }

  @Test
  void aGuardedWriteOnAStrictTriggerTableWithoutTriggerModeNamesTheOption() throws Exception {
    Lease lease =
        fx.fencedLeases().acquire(resource(), FencingFixture.lease(Duration.ofSeconds(30)));
    assertThatThrownBy(
            () ->
                Fencing.run(
                    lease,
                    () -> {
                      try (Connection c = fx.db.getConnection();
                          PreparedStatement insert =
                              GuardedStatements.insert(c, fx.table("audited"), "id", "note")) {
                        insert.setLong(1, 1);
                        insert.setString(2, "x");
                        insert.executeUpdate();
                      }
                    }))
        .isInstanceOfSatisfying(
            SQLException.class,
            e -> {
              assertThat(e.getSQLState()).isEqualTo("ZF003");
              assertThat(e.getMessage()).contains("FenceOptions.withTriggerMode(true)");
            });
    lease.close();
  }
}
