package dev.fencing.spring.billing;

import dev.fencing.core.FencingToken;
import dev.fencing.jdbc.Fencing;
import dev.fencing.spring.Fenced;
import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The nightly billing job: charges every customer not charged yet, one transaction each. */
@Component
public class BillingJob {

  private final JdbcTemplate jdbc;
  private final Billing billing;

  public BillingJob(JdbcTemplate jdbc, Billing billing) {
    this.jdbc = jdbc;
    this.billing = billing;
  }

  @Scheduled(cron = "${billing.cron:-}")
  @Fenced(
      resource = "${billing.resource}",
      leaseTime = "${billing.lease-time}",
      maxWait = "${billing.max-wait}",
      renew = false)
  public void billNightly() {
    List<Long> due =
        jdbc.queryForList(
            "SELECT id FROM customers c WHERE NOT EXISTS"
                + " (SELECT 1 FROM charges WHERE customer_id = c.id) ORDER BY id",
            Long.class);
    for (long customer : due) {
      billing.charge(customer);
    }
  }

  /** The same job for callers that must know when another instance holds the lease. */
  @Fenced(
      resource = "${billing.resource}",
      leaseTime = "${billing.lease-time}",
      maxWait = "${billing.max-wait}",
      onUnavailable = Fenced.OnUnavailable.FAIL)
  public void billNightlyOrFail() {
    billNightlyUnfenced();
  }

  /** Both annotations on one method: the fenced advice runs first, then the transaction. */
  @Fenced(
      resource = "${billing.resource}",
      leaseTime = "${billing.lease-time}",
      maxWait = "${billing.max-wait}")
  @Transactional
  public FencingToken billAllInOneTransaction() {
    billNightlyUnfenced();
    return Fencing.currentLease().orElseThrow().token();
  }

  private void billNightlyUnfenced() {
    List<Long> due =
        jdbc.queryForList(
            "SELECT id FROM customers c WHERE NOT EXISTS"
                + " (SELECT 1 FROM charges WHERE customer_id = c.id) ORDER BY id",
            Long.class);
    for (long customer : due) {
      jdbc.update("INSERT INTO charges (customer_id, amount_cents) VALUES (?, 1000)", customer);
    }
  }
}
