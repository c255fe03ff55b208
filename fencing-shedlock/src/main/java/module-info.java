/**
 * A ShedLock {@code LockProvider} whose locks are fenced leases: a task guarded by
 * {@code @SchedulerLock} writes through a {@code FencedDataSource} in the fencing scope, so the
 * database rejects its writes once another instance has taken the lock over.
 */
module dev.fencing.shedlock {
  requires transitive dev.fencing.jdbc;
  requires transitive net.javacrumbs.shedlock.core;
  requires org.slf4j;

  exports dev.fencing.shedlock;
}
