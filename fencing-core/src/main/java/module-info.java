/**
 * Redis leases with fencing tokens: atomic acquire, heartbeat, owner-only release, loss events.
 *
 * <p>The public API is the package {@code dev.fencing.core}; {@code dev.fencing.core.internal} is
 * only open to fencing's own modules (fencing-test-support builds its in-memory lease manager on
 * it).
 */
module dev.fencing.core {
  requires transitive redisson;
  requires org.slf4j;

  exports dev.fencing.core;
  exports dev.fencing.core.internal to
      dev.fencing.jdbc,
      dev.fencing.testing;
}
