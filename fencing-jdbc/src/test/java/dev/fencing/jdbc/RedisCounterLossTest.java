package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.PrivateRedis;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Redis forgets: restarted without persistence, or failed over to a replica that missed increments,
 * it hands out tokens the database has already seen, even the same token twice.
 */
class RedisCounterLossTest {

  private static final LeaseRequest THIRTY_SECONDS = FencingFixture.lease(Duration.ofSeconds(30));

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @Test
  void whenTwoHoldersGetTheSameTokenExactlyOneCanWrite() throws Exception {
    fx.insertAccount(1, "nobody", 0);
    RedisLeaseManager plain = fx.leases();
    FencedLeaseManager fenced = new FencedLeaseManager(plain, fx.db.fence());
    Lease first = fenced.acquire("twins", THIRTY_SECONDS);
    // A fail-over to a replica that had neither the lock nor the last increment:
    fx.expireInRedis("twins");
    fx.setRedisCounter("twins", first.token().value() - 1);
    Lease twin = plain.acquire("twins", THIRTY_SECONDS);
    assertThat(twin.token()).isEqualTo(first.token());
    twin.close();
    fx.setRedisCounter("twins", first.token().value() - 1);

    Lease second = fenced.acquire("twins", THIRTY_SECONDS);

    assertThat(second.token())
        .as("registration saw the duplicate and moved Redis past the fence")
        .isGreaterThan(first.token());
    assertThatThrownBy(() -> fx.guardedSetOwner(FencingFixture.unawareOfLoss(first), 1, "first"))
        .isInstanceOf(StaleTokenException.class);
    assertThat(fx.guardedSetOwner(second, 1, "second")).isEqualTo(1);
    assertThat(fx.ownerOf(1)).isEqualTo("second");
    second.close();
    first.close();
  }

  @Test
  void aSecondRegistrationOfTheSameTokenByAnotherLeaseIsRejected() throws Exception {
    RedisLeaseManager plain = fx.leases();
    Lease first = plain.acquire("same-token", THIRTY_SECONDS);
    fx.db.fence().register(first);
    fx.expireInRedis("same-token");
    fx.setRedisCounter("same-token", first.token().value() - 1);
    Lease twin = plain.acquire("same-token", THIRTY_SECONDS);
    assertThat(twin.token()).isEqualTo(first.token());

    assertThatThrownBy(() -> fx.db.fence().register(twin))
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> assertThat(e.currentToken()).isEqualTo(first.token().value()));
    fx.db.fence().register(first); // re-registering the same lease is idempotent
    twin.close();
    first.close();
  }

  @Test
  void afterAnEmptyRedisRestartTheNextHolderWritesAndTheStaleOneIsRejected() throws Exception {
    fx.insertAccount(2, "nobody", 0);
    try (PrivateRedis redis = PrivateRedis.start()) {
      RedissonClient client = redis.connect();
      try (RedisLeaseManager plain = RedisLeaseManager.create(client, LeaseOptions.defaults())) {
        FencedLeaseManager fenced = new FencedLeaseManager(plain, fx.db.fence());
        for (int i = 0; i < 3; i++) {
          fenced.acquire("restart", THIRTY_SECONDS).close();
        }
        Lease before = fenced.acquire("restart", THIRTY_SECONDS);
        assertThat(before.token().value()).isEqualTo(4);
        assertThat(fx.guardedSetOwner(before, 2, "before")).isEqualTo(1);

        redis.restartEmpty();

        Lease after = fenced.acquire("restart", THIRTY_SECONDS.withMaxWait(Duration.ofSeconds(5)));
        assertThat(after.token().value()).isGreaterThan(4);
        assertThat(fx.db.fence().currentToken("restart")).hasValue(after.token().value());
        assertThat(fx.guardedSetOwner(after, 2, "after")).isEqualTo(1);
        assertThatThrownBy(
                () -> fx.guardedSetOwner(FencingFixture.unawareOfLoss(before), 2, "stale"))
            .isInstanceOf(StaleTokenException.class);
        assertThat(fx.ownerOf(2)).isEqualTo("after");
        after.close();
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void afterAFlushTheNextHolderIsAboveTheFence() throws Exception {
    try (PrivateRedis redis = PrivateRedis.start()) {
      RedissonClient client = redis.connect();
      try (RedisLeaseManager plain = RedisLeaseManager.create(client, LeaseOptions.defaults())) {
        FencedLeaseManager fenced = new FencedLeaseManager(plain, fx.db.fence());
        Lease first = fenced.acquire("flush", THIRTY_SECONDS);
        first.close();
        Lease second = fenced.acquire("flush", THIRTY_SECONDS);
        second.close();
        redis.cli("flushall");
        try (Lease third = fenced.acquire("flush", THIRTY_SECONDS)) {
          assertThat(third.token()).isGreaterThan(second.token());
        }
      } finally {
        client.shutdown();
      }
    }
  }
}
