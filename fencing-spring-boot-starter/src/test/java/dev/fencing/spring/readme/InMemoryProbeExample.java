package dev.fencing.spring.readme;

import dev.fencing.testing.StaleWriterProbe;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The {@code @SpringBootTest} of docs/testing.md; the block between the markers is there verbatim.
 * Compiled, not run: an inner class that is not {@code @Nested} is no test class of its own (the
 * same wiring runs in {@code InMemoryLeasesPropertyTest}).
 */
public class InMemoryProbeExample {

  /** A DAO as in the docs. */
  interface BillingDao {
    void charge(long account, long cents) throws Exception;
  }

  // README:
  @SpringBootTest(properties = "fencing.test.in-memory-leases=true")
  class BillingDaoFencingTest {

    @Autowired StaleWriterProbe probe;
    @Autowired BillingDao billing;

    @Test
    void chargingIsFenced() {
      probe.check(as -> billing.charge(1, 500));
    }
  }
  // README:
}
