package dev.fencing.testing;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The monotonic clock an {@link InMemoryLeaseManager} judges lease time by, which a test moves
 * forward. It runs at the pace of the JVM's monotonic clock, so waits stay bounded; {@link
 * #advance(Duration)} jumps ahead at once, as a process paused for that long would see it.
 *
 * <pre>{@code
 * SettableClock clock = SettableClock.create();
 * try (InMemoryLeaseManager leases = InMemoryLeaseManager.create(clock)) {
 *   Lease lease = leases.acquire("job", LeaseRequest.forLeaseTime(Duration.ofSeconds(30)).withoutRenewal());
 *   clock.advance(Duration.ofMinutes(1)); // the lease is now reported lost (EXPIRED)
 * }
 * }</pre>
 *
 * <p>Thread-safe. The clock never goes back.
 */
public final class SettableClock {

  private final AtomicLong offsetNanos = new AtomicLong();
  private final List<Runnable> onAdvance = new CopyOnWriteArrayList<>();

  private SettableClock() {}

  /**
   * Returns a clock that starts at the JVM's monotonic time.
   *
   * @return the clock
   */
  public static SettableClock create() {
    return new SettableClock();
  }

  /**
   * Returns the current time in nanoseconds, only meaningful as a difference: the JVM's monotonic
   * time plus every advance so far.
   *
   * @return the time
   */
  public long nanoTime() {
    return System.nanoTime() + offsetNanos.get();
  }

  /**
   * Moves the clock forward by {@code amount}; every lease manager on this clock looks at its
   * leases at once (a lease whose deadline passed is reported lost).
   *
   * @param amount how far to jump
   * @throws NullPointerException if {@code amount} is null
   * @throws IllegalArgumentException if {@code amount} is negative
   */
  public void advance(Duration amount) {
    Objects.requireNonNull(amount, "amount");
    if (amount.isNegative()) {
      throw new IllegalArgumentException("the clock only moves forward, got " + amount);
    }
    offsetNanos.addAndGet(amount.toNanos());
    onAdvance.forEach(Runnable::run);
  }

  /**
   * Returns how far the clock has been moved ahead of the JVM's monotonic clock.
   *
   * @return the sum of every advance
   */
  public Duration advancedBy() {
    return Duration.ofNanos(offsetNanos.get());
  }

  void onAdvance(Runnable listener) {
    onAdvance.add(listener);
  }

  void removeOnAdvance(Runnable listener) {
    onAdvance.remove(listener);
  }
}
