package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.core.LossReason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The fence epoch without a real fail-over: a registration whose epoch is older than the server's
 * (what every registration made before a promotion looks like afterwards) names no holder any more,
 * and {@link FencedLeaseManager} never leaves a holder the fence does not know holding the lock.
 * The real fail-overs are in the integration tests.
 */
class FenceEpochTest {

  private static final FencingFixture fx = new FencingFixture();
  private static final Duration LEASE = Duration.ofMillis(600);
  private static int resources;

  @AfterAll
  static void close() {
    fx.close();
  }

  private static String nextResource(String name) {
    return "epoch-" + name + "-" + ++resources;
  }

  /** What a promotion does to a registration made before it: its epoch is now an older one. */
  private static void promoted(String resource) {
    fx.exec(
        "UPDATE "
            + fx.fenceSchema
            + ".fence SET epoch = epoch - 1 WHERE resource = '"
            + resource
            + "'");
  }

  /** A fail-over that lost the registration of the lease with token {@code token}. */
  private static void registrationLost(String resource, long token) {
    String fence = fx.fenceSchema + ".fence";
    fx.exec(
        "ALTER TABLE " + fence + " DISABLE TRIGGER fence_no_going_back",
        "UPDATE "
            + fence
            + " SET token = "
            + (token - 1)
            + ", lease_id = 'lost-in-the-fail-over' WHERE resource = '"
            + resource
            + "'",
        "ALTER TABLE " + fence + " ENABLE TRIGGER fence_no_going_back");
  }

  private static int plainInsert(Lease lease, long customer) throws SQLException {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = fx.db.getConnection();
              PreparedStatement insert =
                  c.prepareStatement(
                      "INSERT INTO "
                          + fx.table("charges")
                          + " (customer_id, amount) VALUES (?, 1)")) {
            insert.setLong(1, customer);
            return insert.executeUpdate();
          }
        });
  }

  private static int triggerModeInsert(Lease lease, long id) throws SQLException {
    return Fencing.call(
        lease,
        () -> {
          try (Connection c = fx.triggerDb.getConnection();
              PreparedStatement insert =
                  c.prepareStatement(
                      "INSERT INTO " + fx.table("audited") + " (id, note) VALUES (?, 'x')")) {
            insert.setLong(1, id);
            return insert.executeUpdate();
          }
        });
  }

  private static void awaitLoss(Lease lease) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (lease.isHeld()) {
      assertThat(System.nanoTime() - deadline).as("the lease was never marked lost").isNegative();
      Thread.sleep(10);
    }
  }

  @Test
  void aRegistrationFromBeforeAPromotionNamesNoHolderAndItsHolderMustAcquireAgain()
      throws Exception {
    String resource = nextResource("promoted");
    fx.insertAccount(9001, "nobody", 0);
    try (FencedLeaseManager leases = fx.fencedLeases()) {
      Lease a = leases.acquire(resource, FencingFixture.lease(LEASE));
      Lease stale = FencingFixture.unawareOfLoss(a);
      promoted(resource);

      for (int attempt = 0; attempt < 2; attempt++) {
        assertThatThrownBy(() -> fx.guardedSetOwner(stale, 9001, "A"))
            .isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> plainInsert(stale, 9001)).isInstanceOf(StaleTokenException.class);
        assertThatThrownBy(() -> triggerModeInsert(stale, 9001))
            .isInstanceOf(StaleTokenException.class);
      }
      assertThat(fx.ownerOf(9001)).isEqualTo("nobody");
      assertThat(
              fx.queryLong(
                  "SELECT count(*) FROM " + fx.table("charges") + " WHERE customer_id = 9001"))
          .isZero();
      awaitLoss(a);
      assertThat(a.lossReason()).isEqualTo(Optional.of(LossReason.SUPERSEDED));

      Lease again = leases.acquire(resource, FencingFixture.lease(LEASE));
      assertThat(again.token().value()).isGreaterThan(a.token().value());
      assertThat(fx.guardedSetOwner(again, 9001, "again")).isEqualTo(1);
      again.close();
    }
  }

  @Test
  void controlTheSameRegistrationOnTheCurrentEpochKeepsWriting() throws Exception {
    String resource = nextResource("current");
    fx.insertAccount(9002, "nobody", 0);
    try (FencedLeaseManager leases = fx.fencedLeases()) {
      Lease a = leases.acquire(resource, FencingFixture.lease(LEASE));
      assertThat(fx.guardedSetOwner(a, 9002, "A")).isEqualTo(1);
      assertThat(plainInsert(a, 9002)).isEqualTo(1);
      assertThat(triggerModeInsert(a, 9002)).isEqualTo(1);
      assertThat(fx.ownerOf(9002)).isEqualTo("A");
      a.close();
    }
  }

  @Test
  void aHeldLeaseWhoseRegistrationAFailOverLostIsRegisteredAgain() throws Exception {
    String resource = nextResource("lost");
    fx.insertAccount(9003, "nobody", 0);
    fx.setRedisCounter(resource, 5);
    try (FencedLeaseManager leases = fx.fencedLeases()) {
      Lease b = leases.acquire(resource, FencingFixture.lease(LEASE));
      registrationLost(resource, b.token().value());
      assertThat(fx.db.fence().currentToken(resource)).hasValue(b.token().value() - 1);

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (fx.db.fence().currentToken(resource).orElse(0) != b.token().value()) {
        assertThat(b.isHeld()).as("B was marked lost instead of registered again").isTrue();
        assertThat(System.nanoTime() - deadline).as("B was never registered again").isNegative();
        Thread.sleep(10);
      }
      assertThat(fx.guardedSetOwner(b, 9003, "B")).isEqualTo(1);
      assertThat(b.isHeld()).isTrue();
      b.close();
    }
  }
}
