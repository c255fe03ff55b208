package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Scopes entered with {@link Fencing#enter(Lease)}, for frameworks that lock and unlock apart. */
class FencingScopeTest {

  private static RedissonClient redisson;
  private static RedisLeaseManager leases;
  private static String prefix;

  @BeforeAll
  static void setUp() {
    redisson = RedisServers.connectShared();
    prefix = "fsc-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults().withKeyPrefix(prefix));
  }

  @AfterAll
  static void tearDown() {
    leases.close();
    redisson.getKeys().deleteByPattern(prefix + "*");
    redisson.shutdown();
  }

  private static Lease lease(String resource) {
    return leases.acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(30)));
  }

  @Test
  void shouldMakeTheLeaseCurrentUntilClosedAndRestoreTheEnclosingScope() {
    try (Lease outer = lease("scope-outer");
        Lease inner = lease("scope-inner")) {
      try (Fencing.Scope outerScope = Fencing.enter(outer)) {
        try (Fencing.Scope innerScope = Fencing.enter(inner)) {
          assertThat(Fencing.currentLease()).containsSame(inner);
          assertThat(innerScope.lease()).isSameAs(inner);
        }
        assertThat(Fencing.currentLease()).containsSame(outer);
        outerScope.close();
        outerScope.close(); // twice does nothing
      }
      assertThat(Fencing.currentLease()).isEmpty();
    }
  }

  @Test
  void shouldRefuseToCloseAnOuterScopeBeforeTheInnerOne() {
    try (Lease outer = lease("scope-order-outer");
        Lease inner = lease("scope-order-inner")) {
      Fencing.Scope outerScope = Fencing.enter(outer);
      Fencing.Scope innerScope = Fencing.enter(inner);
      assertThatThrownBy(outerScope::close)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("innermost first");
      innerScope.close();
      outerScope.close();
      assertThat(Fencing.currentLease()).isEmpty();
    }
  }

  @Test
  void shouldRefuseToCloseAScopeOnAnotherThread() throws Exception {
    try (Lease lease = lease("scope-thread")) {
      Fencing.Scope scope = Fencing.enter(lease);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread other =
          new Thread(
              () -> {
                try {
                  scope.close();
                } catch (Throwable t) {
                  failure.set(t);
                }
              });
      other.start();
      other.join();
      assertThat(failure.get()).isInstanceOf(IllegalStateException.class);
      assertThat(Fencing.currentLease()).containsSame(lease);
      scope.close();
      assertThat(Fencing.currentLease()).isEmpty();
    }
  }

  @Test
  void shouldRefuseToEnterWithALeaseKnownLost() {
    Lease lease = lease("scope-lost");
    lease.close();
    assertThatThrownBy(() -> Fencing.enter(lease)).isInstanceOf(LeaseLostException.class);
    assertThat(Fencing.currentLease()).isEmpty();
  }
}
