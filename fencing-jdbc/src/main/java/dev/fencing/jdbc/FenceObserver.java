package dev.fencing.jdbc;

import dev.fencing.core.Lease;

/**
 * Sees what the fence does, for metrics and logs: registrations, recoveries from a lost Redis
 * counter, and stale writes rejected. All methods do nothing by default. Callbacks run on the
 * caller's thread: they must be fast, must not block, and should not throw (anything thrown is
 * ignored: logged by {@link FencedLeaseManager}, added as suppressed to the rejection by {@link
 * FencedDataSource}).
 *
 * <p>Registrations and recoveries are reported by {@link FencedLeaseManager}; rejected stale
 * attempts by {@link FencedDataSource}.
 */
public interface FenceObserver {

  /** An observer that does nothing. */
  FenceObserver NONE = new FenceObserver() {};

  /**
   * A lease was registered in the fence.
   *
   * @param lease the registered lease
   */
  default void onRegistered(Lease lease) {}

  /**
   * Registering a lease failed: the fence already held its token or a higher one ({@code failure}
   * is then a {@link StaleTokenException}), the database failed, or the lease was lost meanwhile. A
   * stale registration is followed by a counter recovery unless the recoveries are exhausted.
   *
   * @param lease the lease that could not be registered
   * @param failure what went wrong
   */
  default void onRegistrationFailed(Lease lease, Throwable failure) {}

  /**
   * Redis had lost its token counter: it was advanced past the token the fence remembers, and the
   * lease is acquired again.
   *
   * @param lease the lease whose token the fence had already seen
   * @param fenceToken the token the fence held
   */
  default void onCounterRecovered(Lease lease, long fenceToken) {}

  /**
   * The database refused a write as stale (the fence names a newer holder, or the writer's lease
   * was never registered): a refusal by the fence or the trigger, a guarded or rewritten write that
   * affected no row while the fence named another holder (through JDBC or {@link
   * dev.fencing.jdbc.jooq.FencedDsl}), or a serialization failure after the fence moved. A write
   * refused in the JVM because its lease was already known lost throws {@link
   * LeaseLostSQLException} (or, from {@link Fencing#run}, {@link
   * dev.fencing.core.LeaseLostException}) instead and is reported as a lease loss.
   *
   * @param rejection the exception thrown to the writer
   */
  default void onWriteRejected(StaleTokenException rejection) {}
}
