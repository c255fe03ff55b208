package dev.fencing.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.fencing.core.internal.ResourceNames;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The exact edges of every validated value: the last accepted and the first refused. */
class OptionBoundariesTest {

  private static final Duration NANO = Duration.ofNanos(1);

  @Test
  void leaseTimeRunsFromTenMillisecondsToThreeHundredSixtyFiveDays() {
    assertThat(LeaseRequest.forLeaseTime(LeaseRequest.MIN_LEASE_TIME).leaseTime())
        .isEqualTo(Duration.ofMillis(10));
    assertThat(LeaseRequest.forLeaseTime(LeaseRequest.MAX_DURATION).leaseTime())
        .isEqualTo(Duration.ofDays(365));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> LeaseRequest.forLeaseTime(LeaseRequest.MIN_LEASE_TIME.minus(NANO)))
        .withMessageContaining("at least 10ms");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> LeaseRequest.forLeaseTime(LeaseRequest.MAX_DURATION.plus(NANO)))
        .withMessageContaining("at most 365 days");
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                new LeaseRequest(
                    LeaseRequest.MIN_LEASE_TIME.minus(NANO), Duration.ZERO, true, NANO));
    assertThatIllegalArgumentException()
        .isThrownBy(
            () ->
                new LeaseRequest(LeaseRequest.MAX_DURATION.plus(NANO), Duration.ZERO, true, NANO));
  }

  @Test
  void maxWaitRunsFromZeroToThreeHundredSixtyFiveDays() {
    LeaseRequest request = LeaseRequest.forLeaseTime(Duration.ofSeconds(3));
    assertThat(request.maxWait()).isZero();
    assertThat(request.withMaxWait(LeaseRequest.MAX_DURATION).maxWait())
        .isEqualTo(LeaseRequest.MAX_DURATION);
    assertThatIllegalArgumentException()
        .isThrownBy(() -> request.withMaxWait(Duration.ZERO.minus(NANO)))
        .withMessageContaining("maxWait must not be negative");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> request.withMaxWait(LeaseRequest.MAX_DURATION.plus(NANO)))
        .withMessageContaining("maxWait must be at most 365 days");
  }

  @Test
  void theSafetyMarginMustEndBeforeTheLockCouldExpireAfterTheLastRenewal() {
    LeaseRequest request = LeaseRequest.forLeaseTime(Duration.ofSeconds(3));
    assertThat(request.renewInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(request.safetyMargin()).isEqualTo(Duration.ofMillis(300));
    Duration room = Duration.ofSeconds(2);
    assertThat(request.withSafetyMargin(room.minus(NANO)).safetyMargin())
        .isEqualTo(room.minus(NANO));
    assertThatIllegalArgumentException()
        .isThrownBy(() -> request.withSafetyMargin(room))
        .withMessageContaining("must be shorter than leaseTime");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> request.withSafetyMargin(Duration.ZERO))
        .withMessageContaining("safetyMargin must be positive");
  }

  @Test
  void copiesChangeOnlyWhatTheyName() {
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofSeconds(3)).withMaxWait(Duration.ofSeconds(7));
    assertThat(request.renewing()).isTrue();
    LeaseRequest once = request.withoutRenewal();
    assertThat(once.renewing()).isFalse();
    assertThat(once.maxWait()).isEqualTo(Duration.ofSeconds(7));
    assertThat(once.leaseTime()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void operationTimeoutRunsUpToOneHour() {
    LeaseOptions options = LeaseOptions.defaults();
    assertThat(options.withOperationTimeout(LeaseOptions.MAX_OPERATION_TIMEOUT).operationTimeout())
        .isEqualTo(Duration.ofHours(1));
    assertThat(options.withOperationTimeout(NANO).operationTimeout()).isEqualTo(NANO);
    assertThatIllegalArgumentException()
        .isThrownBy(
            () -> options.withOperationTimeout(LeaseOptions.MAX_OPERATION_TIMEOUT.plus(NANO)))
        .withMessageContaining("at most");
  }

  @Test
  void tokensOrderByValue() {
    FencingToken one = FencingToken.of(1);
    FencingToken two = FencingToken.of(2);
    assertThat(one.value()).isEqualTo(1);
    assertThat(two.isNewerThan(one)).isTrue();
    assertThat(one.isNewerThan(two)).isFalse();
    assertThat(one.isNewerThan(FencingToken.of(1))).isFalse();
    assertThat(one.compareTo(two)).isNegative();
    assertThat(two.compareTo(one)).isPositive();
    assertThat(two.compareTo(FencingToken.of(2))).isZero();
    assertThat(two).hasToString("2");
  }

  @Test
  void aValidResourceNameComesBackUnchangedAndABadOneIsShownPrintably() {
    assertThat(ResourceNames.validate("billing-nightly")).isEqualTo("billing-nightly");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ResourceNames.validate("new\nline"))
        .withMessageContaining("\"new\\u000aline\"");
    assertThatIllegalArgumentException()
        .isThrownBy(() -> ResourceNames.validate("x".repeat(70) + "{"))
        .withMessageContaining("\"" + "x".repeat(60) + "\"");
  }
}
