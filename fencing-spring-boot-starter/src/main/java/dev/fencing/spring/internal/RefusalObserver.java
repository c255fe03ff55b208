package dev.fencing.spring.internal;

/**
 * Told once of every write the JVM refused because the lease was known lost, as the starter's
 * translation sees it (the database's rejections reach the meters as fence events).
 */
@FunctionalInterface
public interface RefusalObserver {

  /**
   * A write was refused in the JVM.
   *
   * @param refusal the {@code LeaseLostException} or {@code LeaseLostSQLException}
   */
  void onRefusedInJvm(Throwable refusal);
}
