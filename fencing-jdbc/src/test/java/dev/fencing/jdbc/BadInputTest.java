package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BadInputTest {

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "accounts; DROP TABLE accounts",
        "\"accounts\"",
        "accounts--",
        "a.b.c",
        "acc ounts",
        "",
        "1accounts",
        "accounts')"
      })
  void shouldRejectInjectionInTableAndColumnNamesBeforeTouchingTheDatabase(String name)
      throws Exception {
    try (Lease lease =
        fx.fencedLeases().acquire("bad-input", FencingFixture.lease(Duration.ofSeconds(30)))) {
      Fencing.run(
          lease,
          () -> {
            try (Connection c = fx.db.getConnection()) {
              assertThatThrownBy(() -> GuardedStatements.update(c, name, "owner = ?", "id = ?"))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThatThrownBy(() -> GuardedStatements.delete(c, name, "id = ?"))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThatThrownBy(() -> GuardedStatements.insert(c, fx.table("charges"), name))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThatThrownBy(
                      () ->
                          GuardedStatements.upsert(
                              c, fx.table("charges"), List.of(name), List.of(name)))
                  .isInstanceOf(IllegalArgumentException.class);
            }
          });
    }
    assertThat(fx.queryLong("SELECT count(*) FROM " + fx.table("accounts"))).isZero();
  }

  @Test
  void shouldRejectFragmentsThatTryToEndTheStatement() throws Exception {
    try (Lease lease =
        fx.fencedLeases().acquire("bad-frag", FencingFixture.lease(Duration.ofSeconds(30)))) {
      Fencing.run(
          lease,
          () -> {
            try (Connection c = fx.db.getConnection()) {
              assertThatThrownBy(
                      () ->
                          GuardedStatements.update(
                              c, fx.table("accounts"), "owner = 'x'; DROP TABLE x", "id = 1"))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThatThrownBy(() -> GuardedStatements.delete(c, fx.table("accounts"), " "))
                  .isInstanceOf(IllegalArgumentException.class);
              assertThatThrownBy(
                      () -> GuardedStatements.insert(c, fx.table("charges"), "fence_token"))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessageContaining("fence_token");
              assertThatThrownBy(
                      () ->
                          GuardedStatements.upsert(
                              c, fx.table("charges"), List.of("amount"), List.of("customer_id")))
                  .isInstanceOf(IllegalArgumentException.class);
            }
          });
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"x'; DROP TABLE t; --", "a b", "{slot}", "semi;colon", ""})
  void shouldRejectInjectionInResourceNames(String resource) {
    FencedLeaseManager leases = fx.fencedLeases();
    assertThatThrownBy(() -> leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> leases.tryAcquire(resource, FencingFixture.lease(Duration.ofSeconds(30))))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectNullAndNonPositiveTokensAndBadOptions() {
    assertThatThrownBy(() -> FencingToken.of(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencingToken.of(-1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FenceOptions.defaults().withSchema("fencing; DROP"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FenceOptions.defaults().withRegistrationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatNullPointerException().isThrownBy(() -> FencedDataSource.wrap(null, null));
    assertThatNullPointerException().isThrownBy(() -> new FencedLeaseManager(null, null));
    assertThatNullPointerException().isThrownBy(() -> fx.db.fence().register(null));
    assertThatNullPointerException().isThrownBy(() -> Fencing.run(null, () -> {}));
  }

  @Test
  void shouldRefuseAClosedLease() {
    Lease lease = fx.fencedLeases().acquire("closed", FencingFixture.lease(Duration.ofSeconds(30)));
    lease.close();
    assertThatThrownBy(() -> Fencing.run(lease, () -> {}))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("released");
    assertThatThrownBy(() -> fx.db.fence().register(lease)).isInstanceOf(LeaseLostException.class);
  }

  @Test
  void shouldRefuseAGuardedWriteOutsideAScopeWithAClearError() throws Exception {
    try (Connection plain = fx.db.getConnection()) {
      assertThatThrownBy(
              () -> GuardedStatements.update(plain, fx.table("accounts"), "owner = ?", "id = ?"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Fencing.run");
    }
    try (Connection raw = fx.pool.getConnection()) {
      assertThatThrownBy(() -> GuardedStatements.insert(raw, fx.table("charges"), "amount"))
          .isInstanceOf(IllegalStateException.class);
    }
  }
}
