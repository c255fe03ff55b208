package dev.fencing.spring.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LossReason;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.StaleTokenException;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The application's {@link LeaseObserver} and {@link FenceObserver} beans (the starter's meters
 * among them), each told of every event.
 */
public final class Observers {

  private Observers() {}

  /**
   * Returns one lease observer that tells every {@link LeaseObserver} bean, resolved now.
   *
   * @param beans the beans
   * @return the observer; {@link LeaseObserver#NONE} when there is none
   */
  public static LeaseObserver lease(ObjectProvider<LeaseObserver> beans) {
    List<LeaseObserver> all = beans.orderedStream().collect(Collectors.toList());
    if (all.isEmpty()) {
      return LeaseObserver.NONE;
    }
    if (all.size() == 1) {
      return all.get(0);
    }
    return new LeaseObserver() {
      @Override
      public void onAcquired(Lease lease) {
        all.forEach(o -> o.onAcquired(lease));
      }

      @Override
      public void onRenewed(Lease lease) {
        all.forEach(o -> o.onRenewed(lease));
      }

      @Override
      public void onRenewalFailed(Lease lease, Throwable failure) {
        all.forEach(o -> o.onRenewalFailed(lease, failure));
      }

      @Override
      public void onLost(Lease lease, LossReason reason) {
        all.forEach(o -> o.onLost(lease, reason));
      }

      @Override
      public void onReleased(Lease lease, boolean deleted) {
        all.forEach(o -> o.onReleased(lease, deleted));
      }

      @Override
      public void onReleaseFailed(Lease lease, Throwable failure) {
        all.forEach(o -> o.onReleaseFailed(lease, failure));
      }
    };
  }

  /**
   * Returns one fence observer that tells every {@link FenceObserver} bean, resolved now.
   *
   * @param beans the beans
   * @return the observer; {@link FenceObserver#NONE} when there is none
   */
  public static FenceObserver fence(ObjectProvider<FenceObserver> beans) {
    List<FenceObserver> all = beans.orderedStream().collect(Collectors.toList());
    if (all.isEmpty()) {
      return FenceObserver.NONE;
    }
    if (all.size() == 1) {
      return all.get(0);
    }
    return new Composite(all);
  }

  /**
   * Returns a fence observer that resolves the {@link FenceObserver} beans at its first event: the
   * data source is wrapped while it is being created, before the beans it would report to (a meter
   * registry among them) should be.
   *
   * @param beans the beans
   * @return the observer
   */
  public static FenceObserver deferredFence(ObjectProvider<FenceObserver> beans) {
    return new Deferred(() -> fence(beans));
  }

  private record Composite(List<FenceObserver> all) implements FenceObserver {
    @Override
    public void onRegistered(Lease lease) {
      all.forEach(o -> o.onRegistered(lease));
    }

    @Override
    public void onRegistrationFailed(Lease lease, Throwable failure) {
      all.forEach(o -> o.onRegistrationFailed(lease, failure));
    }

    @Override
    public void onCounterRecovered(Lease lease, long fenceToken) {
      all.forEach(o -> o.onCounterRecovered(lease, fenceToken));
    }

    @Override
    public void onWriteRejected(StaleTokenException rejection) {
      all.forEach(o -> o.onWriteRejected(rejection));
    }
  }

  private static final class Deferred implements FenceObserver {
    private final Supplier<FenceObserver> resolve;
    private volatile FenceObserver resolved;

    Deferred(Supplier<FenceObserver> resolve) {
      this.resolve = resolve;
    }

    private FenceObserver target() {
      FenceObserver result = resolved;
      if (result == null) {
        result = resolve.get();
        resolved = result;
      }
      return result;
    }

    @Override
    public void onRegistered(Lease lease) {
      target().onRegistered(lease);
    }

    @Override
    public void onRegistrationFailed(Lease lease, Throwable failure) {
      target().onRegistrationFailed(lease, failure);
    }

    @Override
    public void onCounterRecovered(Lease lease, long fenceToken) {
      target().onCounterRecovered(lease, fenceToken);
    }

    @Override
    public void onWriteRejected(StaleTokenException rejection) {
      target().onWriteRejected(rejection);
    }
  }
}
