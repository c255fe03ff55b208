package dev.fencing.spring.readme;

import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The README's ShedLock job, unchanged by the move to fencing; the block between the markers is in
 * README.md verbatim.
 */
@Component
public class ShedLockNightlyBilling {

  private final InvoiceService invoices;

  public ShedLockNightlyBilling(InvoiceService invoices) {
    this.invoices = invoices;
  }

  // README:
  @Scheduled(cron = "0 0 2 * * *")
  @SchedulerLock(name = "billing-nightly", lockAtMostFor = "PT5M")
  public void chargeAll() {
    for (long customer : invoices.dueCustomers()) {
      invoices.charge(customer); // @Transactional + JdbcTemplate: fenced, one transaction each
    }
  }
  // README:
}
