package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import java.sql.SQLNonTransientException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A schema given to the migrations and another given to {@link FenceOptions} fail loudly at the
 * first registration, naming the fence schemas that exist, never at some later write.
 */
class FenceSchemaMismatchTest {

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
  void aFenceSchemaTheMigrationsNeverCreatedIsNamedWithTheOnesThatExist() {
    ResourceFence wrong =
        new ResourceFence(fx.pool, FenceOptions.defaults().withSchema("not_migrated_here"));
    Lease lease = fx.leases().acquire("mismatch", FencingFixture.lease(Duration.ofSeconds(30)));
    try {
      assertThatThrownBy(() -> wrong.register(lease))
          .isInstanceOf(SQLNonTransientException.class)
          .hasMessageContaining("\"not_migrated_here\"")
          .hasMessageContaining(fx.fenceSchema)
          .hasMessageContaining("--schema not_migrated_here");
    } finally {
      lease.close();
    }
  }
}
