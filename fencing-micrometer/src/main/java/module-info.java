/**
 * Micrometer meters for fencing: lease acquisitions, losses and active leases; fence registrations,
 * counter recoveries and rejected stale writes.
 */
module dev.fencing.micrometer {
  requires transitive dev.fencing.jdbc;
  requires transitive micrometer.core;

  exports dev.fencing.micrometer;
}
