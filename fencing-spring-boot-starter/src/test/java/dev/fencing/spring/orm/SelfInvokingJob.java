package dev.fencing.spring.orm;

import dev.fencing.spring.Fenced;
import org.springframework.stereotype.Component;

/**
 * A job that calls its own {@code @Fenced} method: the call does not go through the Spring proxy,
 * so the method runs without a lease.
 */
@Component
public class SelfInvokingJob {

  private final Charges charges;

  public SelfInvokingJob(Charges charges) {
    this.charges = charges;
  }

  /** Calls {@link #billFenced} on {@code this}: self-invocation, the proxy is bypassed. */
  public void billThroughSelfInvocation(Charges.Style style, long customer) {
    billFenced(style, customer);
  }

  @Fenced(resource = "self-invoked", leaseTime = "7s", maxWait = "10s", renew = false)
  public void billFenced(Charges.Style style, long customer) {
    charges.charge(style, customer);
  }
}
