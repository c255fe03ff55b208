package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.RedisLeaseManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The registration's {@code lock_timeout} is given to PostgreSQL in whole milliseconds, where 0
 * means "wait forever": a bound that would round to 0 ms must be refused, never sent.
 */
class RegistrationLockTimeoutTest {

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
  @ValueSource(longs = {1, 1_000, 500_000, 999_999})
  void aSubMillisecondRegistrationLockTimeoutIsRefused(long nanos) {
    assertThatThrownBy(
            () -> FenceOptions.defaults().withRegistrationLockTimeout(Duration.ofNanos(nanos)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("registrationLockTimeout")
        .hasMessageContaining("1 ms");
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 999_999})
  void aSubMillisecondRegistrationTimeoutIsRefused(long nanos) {
    assertThatThrownBy(
            () -> FenceOptions.defaults().withRegistrationTimeout(Duration.ofNanos(nanos)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("registrationTimeout")
        .hasMessageContaining("1 ms");
  }

  @Test
  void aLockTimeoutPostgresCannotHoldIsRefused() {
    assertThatThrownBy(
            () ->
                FenceOptions.defaults()
                    .withRegistrationLockTimeout(Duration.ofMillis(Integer.MAX_VALUE + 1L)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("registrationLockTimeout");
    assertThat(
            FenceOptions.defaults()
                .withRegistrationLockTimeout(Duration.ofMillis(Integer.MAX_VALUE))
                .registrationLockTimeout())
        .isEqualTo(Duration.ofMillis(Integer.MAX_VALUE));
  }

  @Test
  @Timeout(60)
  void theShortestLockTimeoutStillGivesUpAtTheRegistrationTimeout() throws Exception {
    RedisLeaseManager leases = fx.leases();
    Lease a = leases.acquire("shortest", FencingFixture.lease(Duration.ofSeconds(30)));
    fx.db.fence().register(a);
    try (Connection holder = DriverManager.getConnection(FencingFixture.URL);
        Statement lock = holder.createStatement()) {
      holder.setAutoCommit(false);
      lock.execute(
          "SELECT 1 FROM " + fx.fenceSchema + ".fence WHERE resource = 'shortest' FOR SHARE");
      fx.expireInRedis("shortest");
      Lease b = leases.acquire("shortest", FencingFixture.lease(Duration.ofSeconds(30)));
      ResourceFence fence =
          new ResourceFence(
              fx.pool,
              FenceOptions.defaults()
                  .withSchema(fx.fenceSchema)
                  .withRegistrationLockTimeout(Duration.ofNanos(1_500_000))
                  .withRegistrationTimeout(Duration.ofMillis(300)));

      assertThatThrownBy(() -> fence.register(b)).isInstanceOf(SQLTimeoutException.class);
      holder.rollback();
    }
  }
}
