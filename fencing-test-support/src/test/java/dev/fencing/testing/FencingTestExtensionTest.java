package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.GuardedStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link FencingTest} hands out the in-memory manager, its clock and a probe on the test's data
 * source.
 */
@FencingTest
class FencingTestExtensionTest {

  private static ProbeDatabase database;

  FencedDataSource db = database.db;

  @BeforeAll
  static void setUp() {
    database = ProbeDatabase.postgres();
  }

  @AfterAll
  static void tearDown() {
    database.close();
  }

  @Test
  void theProbeRunsOnTheTestsDataSource(StaleWriterProbe probe) {
    probe
        .withSchemas(database.schema)
        .check(
            as -> {
              try (Connection c = db.getConnection();
                  PreparedStatement s =
                      GuardedStatements.update(
                          c, database.table("accounts"), "owner = ?", "id = 1")) {
                s.setString(1, "owner-" + as);
                s.executeUpdate();
              }
            });
  }

  @Test
  void theManagerAndTheClockBelongTogether(InMemoryLeaseManager leases, SettableClock clock) {
    Lease lease =
        leases.acquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withoutRenewal());
    clock.advance(Duration.ofMinutes(1));
    assertThat(lease.isHeld()).isFalse();
    assertThat(leases.clock()).isSameAs(clock);
  }
}
