package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.testing.RedisServers;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;

class LeaseInputValidationTest {

  private static RedissonClient redisson;
  private static RedisLeaseManager leases;

  @BeforeAll
  static void connect() {
    redisson = RedisServers.connectShared();
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix("test-v:"));
  }

  @AfterAll
  static void disconnect() {
    leases.close();
    redisson.shutdown();
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(
      strings = {
        "",
        "   ",
        "has space",
        "brace{tag}",
        "new\nline",
        "tab\t",
        "quote'",
        "semi;colon",
        "ünïcode",
        "star*"
      })
  void shouldRejectInvalidResourceNames(String resource) {
    assertThatThrownBy(() -> leases.tryAcquire(resource))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resource name");
    assertThatThrownBy(() -> leases.acquire(resource, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> leases.advanceTokenFloor(resource, FencingToken.of(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectOverLongResourceNames() {
    assertThatThrownBy(() -> leases.tryAcquire("r".repeat(201)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 200");
    assertThat(leases.tryAcquire("r".repeat(200))).isPresent().get().satisfies(Lease::close);
  }

  @Test
  void shouldAcceptTheDocumentedCharacters() {
    try (Lease lease = leases.acquire("billing-nightly_v2.eu:tenant/42", Duration.ZERO)) {
      assertThat(lease.isHeld()).isTrue();
    }
  }

  @Test
  void shouldRejectNegativeWaitsAndNullArguments() {
    assertThatThrownBy(() -> leases.acquire("job", Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait");
    assertThatNullPointerException().isThrownBy(() -> leases.acquire("job", null));
    assertThatNullPointerException().isThrownBy(() -> leases.advanceTokenFloor("job", null));
    assertThatNullPointerException()
        .isThrownBy(() -> RedisLeaseManager.create(null, LeaseOptions.defaults()));
    assertThatNullPointerException().isThrownBy(() -> RedisLeaseManager.create(redisson, null));
  }

  @Test
  void shouldRejectNonPositiveTokens() {
    assertThatThrownBy(() -> FencingToken.of(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive");
    assertThatThrownBy(() -> FencingToken.of(-5)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectInvalidOptions() {
    assertThatThrownBy(() -> LeaseOptions.ofLeaseTime(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime must be positive");
    assertThatThrownBy(() -> LeaseOptions.ofLeaseTime(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LeaseOptions.ofLeaseTime(Duration.ofMillis(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 10ms");
    LeaseOptions options = LeaseOptions.defaults();
    assertThatThrownBy(() -> options.withRenewInterval(Duration.ofSeconds(30)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shorter than leaseTime");
    assertThatThrownBy(() -> options.withRenewInterval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> options.withSafetyMargin(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("safetyMargin");
    assertThatThrownBy(() -> options.withOperationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("operationTimeout");
    assertThatThrownBy(() -> options.withKeyPrefix("bad{prefix}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keyPrefix");
    assertThatThrownBy(() -> options.withKeyPrefix("p".repeat(65)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatNullPointerException().isThrownBy(() -> options.withLeaseTime(null));
  }

  @Test
  void shouldDeriveRenewalAndMarginFromTheLeaseTime() {
    LeaseOptions options = LeaseOptions.ofLeaseTime(Duration.ofSeconds(3));
    assertThat(options.renewInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(options.safetyMargin()).isEqualTo(Duration.ofMillis(300));
    assertThat(options.keyPrefix()).isEqualTo("fencing:");
  }
}
