package dev.fencing.spring.orm;

import dev.fencing.spring.Fenced;
import dev.fencing.spring.StaleLeaseWriteException;
import java.util.List;
import org.springframework.stereotype.Component;

/**
 * The billing job in the documented pattern: one transaction per customer; at the first {@link
 * StaleLeaseWriteException} this instance is no longer the holder, so it stops.
 */
@Component
public class OrmBillingJob {

  /** What a run did: how many customers it charged, and the refusal it stopped at (or null). */
  public record Run(int charged, StaleLeaseWriteException stoppedAt) {}

  private final Charges charges;
  private final LossHook hook;

  public OrmBillingJob(Charges charges, LossHook hook) {
    this.charges = charges;
    this.hook = hook;
  }

  @Fenced(resource = "${orm.resource}", leaseTime = "30s", maxWait = "10s", renew = false)
  public Run bill(Charges.Style style, List<Long> customers) {
    int charged = 0;
    for (long customer : customers) {
      hook.at(LossHook.Point.BEFORE_TRANSACTION);
      try {
        charges.charge(style, customer);
      } catch (StaleLeaseWriteException e) {
        return new Run(charged, e); // no longer the holder: stop
      }
      charged++;
    }
    return new Run(charged, null);
  }
}
