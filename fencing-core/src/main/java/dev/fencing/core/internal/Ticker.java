package dev.fencing.core.internal;

/** The monotonic clock leases judge time by; tests substitute a fake one. */
@FunctionalInterface
public interface Ticker {

  /** The JVM's monotonic clock. */
  Ticker SYSTEM = System::nanoTime;

  /** Returns the current time in nanoseconds, only meaningful as a difference. */
  long nanoTime();
}
