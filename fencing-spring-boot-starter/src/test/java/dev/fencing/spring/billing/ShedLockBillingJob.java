package dev.fencing.spring.billing;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The nightly billing job of a ShedLock user: the same charges as {@link BillingJob}, locked with
 * {@code @SchedulerLock} on whatever {@code LockProvider} the context has.
 */
@Component
public class ShedLockBillingJob {

  private final JdbcTemplate jdbc;
  private final Billing billing;
  private final AtomicInteger runs = new AtomicInteger();

  public ShedLockBillingJob(JdbcTemplate jdbc, Billing billing) {
    this.jdbc = jdbc;
    this.billing = billing;
  }

  @Scheduled(cron = "${billing.cron:-}")
  @SchedulerLock(
      name = "${billing.resource}-shedlock",
      lockAtMostFor = "${billing.lock-at-most-for}")
  public void billNightly() {
    runs.incrementAndGet();
    List<Long> due =
        jdbc.queryForList(
            "SELECT id FROM customers c WHERE NOT EXISTS"
                + " (SELECT 1 FROM charges WHERE customer_id = c.id) ORDER BY id",
            Long.class);
    for (long customer : due) {
      billing.charge(customer);
    }
  }

  /** Returns how often the job ran here (ShedLock skips it while another instance holds it). */
  public int runs() {
    return runs.get();
  }
}
