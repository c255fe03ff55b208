package dev.fencing.spring.orm;

/** Called by the job and the charges at each point where the test may end the lease. */
@FunctionalInterface
public interface LossHook {

  /** Where a charge is. */
  enum Point {
    /** Before the charge's transaction begins. */
    BEFORE_TRANSACTION,
    /** Inside the transaction, before the write. */
    IN_TRANSACTION,
    /** Inside the transaction, after the write was handed to the ORM, before the commit. */
    AFTER_WRITE
  }

  void at(Point point);
}
