package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LeaseUnavailableException;
import dev.fencing.spring.billing.BillingApp;
import dev.fencing.spring.billing.BillingJob;
import dev.fencing.spring.billing.ChargeHook;
import dev.fencing.spring.billing.WrongOrderCaller;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** How {@code @Fenced} composes with {@code @Transactional}. */
class FencedAdviceTest {

  private final String schema = "spring_advice_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";
  private ConfigurableApplicationContext context;

  @BeforeEach
  void start() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    context =
        new SpringApplicationBuilder(BillingApp.class)
            .web(WebApplicationType.NONE)
            .bannerMode(Banner.Mode.OFF)
            .initializers(
                c -> c.getBeanFactory().registerSingleton("chargeHook", (ChargeHook) id -> {}))
            .properties(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.schema=" + schema,
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.schemas=" + schema,
                "spring.flyway.locations=classpath:db/billing",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=fencing-spring-test:" + schema + ":",
                "fencing.migrations.enforce=" + schema + ".charges",
                "billing.resource=billing-nightly",
                "billing.lease-time=10s",
                "billing.max-wait=0s")
            .run();
    TestDatabase.execute("INSERT INTO \"" + schema + "\".customers SELECT generate_series(1, 5)");
  }

  @AfterEach
  void stop() throws SQLException {
    context.close();
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  /** The message a @Fenced method called inside a transaction fails with, word for word. */
  static final String FAIL_FAST_MESSAGE =
      "@Fenced BillingJob.billNightly() was called inside a transaction: its connection was taken"
          + " before the lease existed and would not be fenced, so the method was not run. Put"
          + " @Fenced outside @Transactional: call the @Fenced method from outside any transaction"
          + " and do the transactional work in it or in a @Transactional method it calls. On one"
          + " method both annotations work, since the @Fenced advice (order Ordered.HIGHEST_PRECEDENCE + 100) runs"
          + " before the transaction advice, unless @EnableTransactionManagement(order = ...)"
          + " gives the transaction advice a smaller order.";

  @Test
  void transactionOpenedOutsideTheFencedMethodFailsFastAtTheFirstCall() {
    LeaseManager leases = context.getBean(LeaseManager.class);
    assertThatThrownBy(() -> context.getBean(WrongOrderCaller.class).billInsideTransaction())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(FAIL_FAST_MESSAGE)
        .satisfies(e -> System.out.println("[fail-fast] " + e.getMessage()));
    assertThat(charges()).isZero();
    try (Lease lease =
        leases.acquire("billing-nightly", LeaseRequest.forLeaseTime(Duration.ofSeconds(5)))) {
      assertThat(lease.token().value())
          .as("the refused call acquired no lease: this is the resource's first token")
          .isEqualTo(1);
    }
  }

  @Test
  void fencedAndTransactionalOnOneMethodRunFencedInThatOrder() {
    FencingToken token = context.getBean(BillingJob.class).billAllInOneTransaction();
    assertThat(charges()).isEqualTo(5);
    assertThat(
            context
                .getBean(JdbcTemplate.class)
                .queryForList("SELECT DISTINCT fence_token FROM charges", Long.class))
        .containsExactly(token.value());
  }

  @Test
  void writesOutsideAnyFencedMethodAreRejectedOnAStrictTable() {
    assertThatThrownBy(
            () ->
                context
                    .getBean(JdbcTemplate.class)
                    .update("INSERT INTO charges (customer_id, amount_cents) VALUES (1, 1)"))
        .hasMessageContaining("ZF003");
  }

  @Test
  void anInstanceThatFindsTheLeaseTakenSkipsTheRun() {
    LeaseManager leases = context.getBean(LeaseManager.class);
    try (Lease other =
        leases.acquire("billing-nightly", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))) {
      context.getBean(BillingJob.class).billNightly();
      assertThat(other.isHeld()).isTrue();
    }
    assertThat(charges()).isZero();
    context.getBean(BillingJob.class).billNightly();
    assertThat(charges()).isEqualTo(5);
  }

  @Test
  void anInstanceThatFindsTheLeaseTakenFailsWhenAskedTo() {
    LeaseManager leases = context.getBean(LeaseManager.class);
    try (Lease other =
        leases.acquire("billing-nightly", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)))) {
      assertThatThrownBy(() -> context.getBean(BillingJob.class).billNightlyOrFail())
          .isInstanceOf(LeaseUnavailableException.class);
    }
    assertThat(charges()).isZero();
  }

  private int charges() {
    return context
        .getBean(JdbcTemplate.class)
        .queryForObject("SELECT count(*) FROM charges", Integer.class);
  }
}
