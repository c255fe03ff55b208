package dev.fencing.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SlotsTest {

  @Test
  void shouldComputeTheSameSlotsAsRedisCluster() {
    // CLUSTER KEYSLOT answers for these keys
    assertThat(Slots.of("foo")).isEqualTo(12182);
    assertThat(Slots.of("bar")).isEqualTo(5061);
    assertThat(Slots.of("123456789")).isEqualTo(12739);
  }
}
