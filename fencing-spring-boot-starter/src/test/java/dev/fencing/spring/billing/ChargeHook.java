package dev.fencing.spring.billing;

/** Called inside each charge's transaction, before its write; the test stalls a holder here. */
@FunctionalInterface
public interface ChargeHook {
  void beforeCharge(long customerId);
}
