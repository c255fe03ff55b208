package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseRequest;
import dev.fencing.spring.orm.LossHook;
import dev.fencing.spring.orm.OrmApp;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The {@code fencing} health shows a registration stuck behind a session that holds the fence row:
 * a previous holder's transaction left open (here a session that locked the row {@code FOR SHARE},
 * as a guarded write does, and stays idle in its transaction). Down while it waits, with the
 * session; up again once the row is free and the registration went through.
 */
class FencingHealthRegistrationStuckTest {

  private static final String RESOURCE = "health-stuck";

  private final String schema = "spring_health_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private final String keyPrefix = "fencing-spring-test:" + schema + ":";
  private ConfigurableApplicationContext context;

  @BeforeEach
  void start() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    context =
        new SpringApplicationBuilder(OrmApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> c.getBeanFactory().registerSingleton("lossHook", (LossHook) point -> {}))
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/orm",
                "spring.jpa.open-in-view=false",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=" + keyPrefix,
                "fencing.migrations.tables=" + schema + ".charges",
                "orm.resource=" + RESOURCE)
            .run();
  }

  @AfterEach
  void stop() throws SQLException {
    if (context != null) {
      context.close();
    }
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  @Test
  void aRegistrationWaitingBehindASessionThatHoldsTheFenceRowIsShownDownWithTheSession()
      throws Exception {
    LeaseManager leases = context.getBean(LeaseManager.class);
    HealthIndicator health = context.getBean("fencingHealthIndicator", HealthIndicator.class);
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofSeconds(60)).withMaxWait(Duration.ofSeconds(5));
    leases.acquire(RESOURCE, request).close(); // the fence row exists from now on
    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    assertThat(health.health().getDetails()).containsEntry("registrations", "none under way");

    try (Connection blocker = TestDatabase.connect();
        Statement s = blocker.createStatement()) {
      blocker.setAutoCommit(false);
      s.executeQuery(
              "SELECT token FROM \""
                  + fenceSchema
                  + "\".fence WHERE resource = '"
                  + RESOURCE
                  + "' FOR SHARE")
          .close();
      int blockerPid = pid(s);
      CompletableFuture<Lease> successor =
          CompletableFuture.supplyAsync(() -> leases.acquire(RESOURCE, request));

      Health stuck = awaitStatus(health, Status.DOWN, 10);
      System.out.println("[health, registration stuck] " + stuck);
      assertThat(successor).as("the registration waits for the row").isNotDone();
      assertThat(stuck.getDetails().get("registrations").toString()).startsWith("stuck");
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> registrations =
          (List<Map<String, Object>>) stuck.getDetails().get("stuckRegistrations");
      assertThat(registrations)
          .singleElement()
          .satisfies(r -> assertThat(r).containsEntry("resource", RESOURCE));
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> holders =
          (List<Map<String, Object>>) stuck.getDetails().get("fenceHolders");
      assertThat(holders)
          .as("the session holding the fence row, idle in its transaction")
          .anySatisfy(
              h ->
                  assertThat(h)
                      .containsEntry("pid", blockerPid)
                      .containsEntry("state", "idle in transaction"));
      assertThat(stuck.getDetails()).containsEntry("redis", "reachable");

      blocker.rollback(); // the previous holder's transaction ends
      try (Lease registered = successor.get(30, TimeUnit.SECONDS)) {
        assertThat(registered.isHeld()).isTrue();
        Health after = health.health();
        System.out.println("[health, registration done] " + after);
        assertThat(after.getStatus()).isEqualTo(Status.UP);
        assertThat(after.getDetails()).containsEntry("registrations", "none under way");
      }
    }
  }

  private static Health awaitStatus(HealthIndicator indicator, Status status, int seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    Health last = indicator.health();
    while (!last.getStatus().equals(status) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      last = indicator.health();
    }
    assertThat(last.getStatus()).as("health within %d s: %s", seconds, last).isEqualTo(status);
    return last;
  }

  private static int pid(Statement s) throws SQLException {
    try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
