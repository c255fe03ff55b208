package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.testing.RedisServers;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;

class LeaseInputValidationTest {

  private static final LeaseRequest FIVE_SECONDS = LeaseRequest.forLeaseTime(Duration.ofSeconds(5));

  /** A prefix of this run only: a killed run leaves no lock that the next run would trip over. */
  private static final String PREFIX =
      "test-v-" + UUID.randomUUID().toString().substring(0, 8) + ":";

  private static RedissonClient redisson;
  private static RedisLeaseManager leases;

  @BeforeAll
  static void connect() {
    redisson = RedisServers.connectShared();
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(PREFIX));
  }

  @AfterAll
  static void disconnect() {
    leases.close();
    redisson.getKeys().deleteByPattern(PREFIX + "*");
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
    assertThatThrownBy(() -> leases.tryAcquire(resource, FIVE_SECONDS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("resource name");
    assertThatThrownBy(() -> leases.acquire(resource, FIVE_SECONDS))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> leases.advanceTokenFloor(resource, FencingToken.of(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectOverLongResourceNames() {
    assertThatThrownBy(() -> leases.tryAcquire("r".repeat(201), FIVE_SECONDS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 200");
    assertThat(leases.tryAcquire("r".repeat(200), FIVE_SECONDS))
        .isPresent()
        .get()
        .satisfies(Lease::close);
  }

  @Test
  void shouldAcceptTheDocumentedCharacters() {
    try (Lease lease = leases.acquire("billing-nightly_v2.eu:tenant/42", FIVE_SECONDS)) {
      assertThat(lease.isHeld()).isTrue();
    }
  }

  @Test
  void shouldRejectNegativeWaitsAndNullArguments() {
    assertThatThrownBy(() -> FIVE_SECONDS.withMaxWait(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait");
    assertThatNullPointerException().isThrownBy(() -> leases.acquire("job", null));
    assertThatNullPointerException().isThrownBy(() -> leases.tryAcquire("job", null));
    assertThatNullPointerException().isThrownBy(() -> leases.advanceTokenFloor("job", null));
    assertThatNullPointerException()
        .isThrownBy(() -> RedisLeaseManager.create(null, LeaseOptions.defaults()));
    assertThatNullPointerException().isThrownBy(() -> RedisLeaseManager.create(redisson, null));
    assertThatNullPointerException().isThrownBy(() -> LeaseRequest.forLeaseTime(null));
    assertThatNullPointerException().isThrownBy(() -> FIVE_SECONDS.withMaxWait(null));
  }

  @Test
  void shouldRejectNonPositiveTokens() {
    assertThatThrownBy(() -> FencingToken.of(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive");
    assertThatThrownBy(() -> FencingToken.of(-5)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRejectInvalidRequests() {
    assertThatThrownBy(() -> LeaseRequest.forLeaseTime(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime must be at least 10ms");
    assertThatThrownBy(() -> LeaseRequest.forLeaseTime(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LeaseRequest.forLeaseTime(Duration.ofMillis(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 10ms");
    assertThatThrownBy(() -> LeaseRequest.forLeaseTime(Duration.ofDays(366)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime must be at most 365 days");
    assertThatThrownBy(() -> FIVE_SECONDS.withMaxWait(Duration.ofDays(366)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxWait");
    assertThatThrownBy(() -> FIVE_SECONDS.withSafetyMargin(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("safetyMargin must be positive");
    assertThatThrownBy(() -> FIVE_SECONDS.withSafetyMargin(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("safetyMargin");
    assertThatThrownBy(() -> FIVE_SECONDS.withSafetyMargin(Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shorter than leaseTime");
    assertThat(FIVE_SECONDS.withSafetyMargin(Duration.ofMillis(3333))).isNotNull();
  }

  @Test
  void shouldRejectInvalidOptions() {
    LeaseOptions options = LeaseOptions.defaults();
    assertThatThrownBy(() -> options.withOperationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("operationTimeout");
    assertThatThrownBy(() -> options.withOperationTimeout(Duration.ofMillis(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("operationTimeout must be at most");
    assertThatThrownBy(() -> options.withKeyPrefix("bad{prefix}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keyPrefix");
    assertThatThrownBy(() -> options.withKeyPrefix("p".repeat(65)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatNullPointerException().isThrownBy(() -> options.withKeyPrefix(null));
  }

  @Test
  void shouldDeriveRenewalAndMarginFromTheLeaseTime() {
    LeaseRequest request = LeaseRequest.forLeaseTime(Duration.ofSeconds(3));
    assertThat(request.renewInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(request.safetyMargin()).isEqualTo(Duration.ofMillis(300));
    assertThat(request.maxWait()).isZero();
    assertThat(request.renewing()).isTrue();
    assertThat(request.withoutRenewal().renewing()).isFalse();
    assertThat(LeaseOptions.defaults().keyPrefix()).isEqualTo("fencing:");
  }
}
