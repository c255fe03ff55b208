package dev.fencing.spring.readme;

import dev.fencing.jdbc.Fencing;
import dev.fencing.spring.Fenced;
import dev.fencing.spring.StaleLeaseWriteException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/** The README's example job; the block between the markers is in README.md verbatim. */
@Component
public class NightlyBilling {

  private static final Logger log = LoggerFactory.getLogger(NightlyBilling.class);

  private final InvoiceService invoices;

  public NightlyBilling(InvoiceService invoices) {
    this.invoices = invoices;
  }

  // README:
  @Scheduled(cron = "0 0 2 * * *")
  @Fenced(resource = "billing-nightly", leaseTime = "5m", maxWait = "0s")
  public void chargeAll() {
    log.info("billing under token {}", Fencing.currentLease().orElseThrow().token());
    for (long customer : invoices.dueCustomers()) {
      try {
        invoices.charge(customer); // @Transactional: JdbcTemplate, JPA or Spring Data
      } catch (StaleLeaseWriteException e) {
        log.warn("no longer the holder of billing-nightly, stopping: {}", e.getMessage());
        return; // this charge rolled back; the instance holding the lease now carries on
      }
    }
  }
  // README:
}
