package dev.fencing.core.testing;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLossListener;
import dev.fencing.core.LossReason;
import java.time.Duration;
import java.util.Optional;

/** Views of a lease for stale-writer tests. */
public final class StaleViews {

  private StaleViews() {}

  /**
   * The view of a holder that passed its local checks an instant before it froze: it still believes
   * it holds the lease, so only the database can stop its next write.
   */
  public static Lease believedHeld(Lease lease) {
    return new Lease() {
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
        return true;
      }

      @Override
      public void checkHeld() {}

      @Override
      public Optional<LossReason> lossReason() {
        return Optional.empty();
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
        return "believed-held " + lease;
      }
    };
  }
}
