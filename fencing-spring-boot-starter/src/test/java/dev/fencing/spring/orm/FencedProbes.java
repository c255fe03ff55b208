package dev.fencing.spring.orm;

import dev.fencing.spring.Fenced;
import java.util.List;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.stereotype.Component;

/**
 * Single fenced transactions, under {@code @Fenced} and under ShedLock's {@code @SchedulerLock}.
 */
@Component
public class FencedProbes {

  private final Charges charges;

  public FencedProbes(Charges charges) {
    this.charges = charges;
  }

  @Fenced(resource = "orm-probe", leaseTime = "7s", maxWait = "10s", renew = false)
  public String idleTimeoutUnderFenced(Charges.Style style, long customer) {
    return charges.chargeAndShowIdleTimeout(style, customer);
  }

  @SchedulerLock(name = "orm-probe-shedlock", lockAtMostFor = "PT7S")
  public String idleTimeoutUnderShedLock(Charges.Style style, long customer) {
    return charges.chargeAndShowIdleTimeout(style, customer);
  }

  @Fenced(resource = "orm-probe", leaseTime = "7s", maxWait = "10s", renew = false)
  public List<Long> saveAllUnderFenced(List<Long> customers) {
    return charges.saveAllWithSpringDataJdbc(customers);
  }
}
