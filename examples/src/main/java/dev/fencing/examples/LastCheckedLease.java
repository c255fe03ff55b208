package dev.fencing.examples;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLossListener;
import dev.fencing.core.LeaseLostException;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A lease as its holder saw it at its last check: {@link #isHeld()} answers what the real lease
 * answered when {@link #check()} last ran, everything else is the real lease.
 *
 * <p>Why the replay needs it. fencing-jdbc checks the lease locally before every statement of a
 * fenced connection, so a worker that was paused for longer than its lease and then resumes is
 * normally stopped by that local check, before its write reaches PostgreSQL. A real pause can also
 * land <em>after</em> that local check, while the statement is on its way to the server (a GC pause
 * inside the driver, a slow network): then only the database can stop the write. That window is too
 * short to hit on cue, so the replay models it: the stale worker's fenced connections see the lease
 * as the worker saw it when it last asked {@link LockStrategy.Hold#stillAllowed()}, right before it
 * stalled. The pause itself is real (the thread stops, its lease manager's heartbeat stops, the key
 * expires in Redis, a successor acquires and registers); only its position is chosen.
 */
final class LastCheckedLease implements Lease {

  private final Lease lease;
  private volatile boolean heldAtLastCheck = true;

  LastCheckedLease(Lease lease) {
    this.lease = Objects.requireNonNull(lease);
  }

  /** Asks the real lease and remembers the answer. */
  boolean check() {
    boolean held = lease.isHeld();
    heldAtLastCheck = held;
    return held;
  }

  /** The real lease. */
  Lease lease() {
    return lease;
  }

  @Override
  public String resource() {
    return lease.resource();
  }

  @Override
  public FencingToken token() {
    return lease.token();
  }

  @Override
  public String leaseId() {
    return lease.leaseId();
  }

  @Override
  public Duration leaseTime() {
    return lease.leaseTime();
  }

  @Override
  public boolean isHeld() {
    return heldAtLastCheck;
  }

  @Override
  public void checkHeld() {
    if (!heldAtLastCheck) {
      throw new LeaseLostException(
          lease.resource(), lease.token(), "it was not held at the holder's last check");
    }
  }

  @Override
  public Optional<LossReason> lossReason() {
    return heldAtLastCheck ? Optional.empty() : lease.lossReason();
  }

  @Override
  public void onLoss(LeaseLossListener listener) {
    lease.onLoss(listener);
  }

  @Override
  public void markLost(LossReason reason) {
    lease.markLost(reason);
  }

  @Override
  public void release(Duration keepLockedFor) {
    lease.release(keepLockedFor);
  }

  @Override
  public void close() {
    lease.close();
  }

  @Override
  public String toString() {
    return "LastChecked" + lease;
  }
}
