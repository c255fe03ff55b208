package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.FencedLeaseManager;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The in-memory manager's fail-over controls under {@code FencedLeaseManager}: a duplicate token or
 * a lost counter is caught at registration by the real fence and recovered from, so tokens keep
 * increasing from the database's point of view; without the fence the same controls do hand out an
 * old token again.
 */
class InMemoryFailoverRecoveryTest {

  private static final LeaseRequest LEASE = LeaseRequest.forLeaseTime(Duration.ofSeconds(30));
  private static ProbeDatabase database;

  private final InMemoryLeaseManager memory = InMemoryLeaseManager.create();
  private final FencedLeaseManager fenced = new FencedLeaseManager(memory, database.db.fence());

  @BeforeAll
  static void setUp() {
    database = ProbeDatabase.postgres();
  }

  @AfterAll
  static void tearDown() {
    database.close();
  }

  @AfterEach
  void close() {
    fenced.close();
  }

  @Test
  void aDuplicateTokenIsRefusedAtRegistrationAndRecoveredFrom() {
    long before;
    try (Lease first = fenced.acquire("failover-dup", LEASE)) {
      before = first.token().value();
    }
    memory.handOutDuplicateToken("failover-dup");
    try (Lease next = fenced.acquire("failover-dup", LEASE)) {
      assertThat(next.token().value()).isGreaterThan(before);
    }
  }

  @Test
  void aLostCounterIsRecoveredFromThroughTheFence() {
    long before = 0;
    for (int i = 0; i < 3; i++) {
      try (Lease lease = fenced.acquire("failover-lost", LEASE)) {
        before = lease.token().value();
      }
    }
    memory.loseCounter("failover-lost");
    try (Lease next = fenced.acquire("failover-lost", LEASE)) {
      assertThat(next.token().value()).isGreaterThan(before);
    }
  }

  @Test
  void withoutTheFenceTheSameControlsHandOutAnOldTokenAgain() {
    long before;
    try (Lease first = memory.acquire("failover-raw", LEASE)) {
      before = first.token().value();
    }
    memory.handOutDuplicateToken("failover-raw");
    try (Lease next = memory.acquire("failover-raw", LEASE)) {
      assertThat(next.token().value()).isEqualTo(before);
    }
  }
}
