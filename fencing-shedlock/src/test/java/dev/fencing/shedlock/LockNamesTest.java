package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every name ShedLock allows maps to a valid resource name, and no two names to the same one. */
class LockNamesTest {

  private static final String VALID = "[A-Za-z0-9_.:/-]{1,200}";
  private final FencedLockProvider provider =
      new FencedLockProvider(new UnusedLeaseManager(), FencedLockOptions.defaults());

  /** Name mapping needs no lease. */
  private static final class UnusedLeaseManager implements LeaseManager {
    @Override
    public Lease acquire(String resource, LeaseRequest request) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<Lease> tryAcquire(String resource, LeaseRequest request) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void advanceTokenFloor(String resource, FencingToken floor) {}

    @Override
    public LeaseOptions options() {
      return LeaseOptions.defaults();
    }

    @Override
    public void close() {}
  }

  @Test
  void shouldKeepNamesThatAreAlreadyValidResources() {
    for (String name : List.of("billing-nightly", "report_daily", "a.b/c-d", "X9")) {
      assertThat(provider.resourceName(name)).isEqualTo(name);
    }
  }

  @Test
  void shouldEscapeOtherCharactersIntoValidResources() {
    assertThat(provider.resourceName("a b")).isEqualTo("a:0020b");
    assertThat(provider.resourceName("a:b")).isEqualTo("a:003Ab");
    assertThat(provider.resourceName("über")).isEqualTo(":00FCber");
    assertThat(provider.resourceName("\uD800")).isEqualTo(":D800");
    assertThat(provider.resourceName(" ")).matches(VALID);
  }

  @Test
  void shouldNotConfuseAnEscapedNameWithANameThatLooksEscaped() {
    assertThat(provider.resourceName("a:b")).isNotEqualTo(provider.resourceName("a:003Ab"));
    assertThat(provider.resourceName("\uD800")).isNotEqualTo(provider.resourceName("\uD801"));
    assertThat(provider.resourceName("\uD800")).isNotEqualTo(provider.resourceName("?"));
  }

  @Test
  void shouldHashNamesTooLongForAResource() {
    String a = "job-" + "x".repeat(300) + "-a";
    String b = "job-" + "x".repeat(300) + "-b";
    assertThat(provider.resourceName(a)).hasSize(200).matches(VALID).contains(":H");
    assertThat(provider.resourceName(a)).isNotEqualTo(provider.resourceName(b));
    String exactly200 = "y".repeat(200);
    assertThat(provider.resourceName(exactly200)).isEqualTo(exactly200);
    assertThat(provider.resourceName("y".repeat(201))).hasSize(200).contains(":H");
    assertThat(provider.resourceName("é".repeat(100))).hasSize(200).contains(":H");
  }

  @Test
  void shouldBeInjectiveOverRandomNamesWithAPrefix() {
    FencedLockProvider prefixed =
        new FencedLockProvider(
            new UnusedLeaseManager(), FencedLockOptions.defaults().withResourcePrefix("shedlock:"));
    char[] alphabet = {'a', 'B', '0', ':', '_', '-', ' ', 'é', '\uD83D', '\uDE00', 'H', '3', 'A'};
    Random random = new Random(12);
    Map<String, String> seen = new HashMap<>();
    for (int i = 0; i < 200_000; i++) {
      int length = 1 + random.nextInt(random.nextInt(10) == 0 ? 120 : 8);
      StringBuilder name = new StringBuilder();
      for (int j = 0; j < length; j++) {
        name.append(alphabet[random.nextInt(alphabet.length)]);
      }
      String resource = prefixed.resourceName(name.toString());
      assertThat(resource).matches(VALID).startsWith("shedlock:");
      String before = seen.putIfAbsent(resource, name.toString());
      assertThat(before == null || before.equals(name.toString()))
          .as("%s and %s both map to %s", before, name, resource)
          .isTrue();
    }
  }

  @Test
  void shouldRefuseEmptyNamesAndBadPrefixes() {
    assertThatThrownBy(() -> provider.resourceName(""))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> provider.resourceName(null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencedLockOptions.defaults().withResourcePrefix("a b"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FencedLockOptions.defaults().withResourcePrefix("p".repeat(101)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
