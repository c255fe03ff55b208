package dev.fencing.jdbc;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseLostException;
import java.util.Objects;
import java.util.Optional;

/**
 * The fencing scope: inside {@code Fencing.run(lease, work)}, every connection a {@link
 * FencedDataSource} hands out on this thread carries the lease's registration, so existing DAOs are
 * fenced without changes:
 *
 * <pre>{@code
 * try (Lease lease = leases.acquire("billing-nightly",
 *     LeaseRequest.forLeaseTime(Duration.ofMinutes(1)).withMaxWait(Duration.ofSeconds(10)))) {
 *   Fencing.run(lease, () -> billingDao.chargeAll());
 * }
 * }</pre>
 *
 * <p>The scope is bound to the calling thread; connections taken before entering it are not fenced.
 * Scopes nest: the innermost lease wins until its scope ends.
 */
public final class Fencing {

  private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

  private Fencing() {}

  /**
   * Work run inside a scope.
   *
   * @param <E> the checked exception it may throw
   */
  @FunctionalInterface
  public interface Work<E extends Exception> {
    /**
     * Does the work.
     *
     * @throws E whatever the work throws
     */
    void run() throws E;
  }

  /**
   * Work with a result run inside a scope.
   *
   * @param <T> the result type
   * @param <E> the checked exception it may throw
   */
  @FunctionalInterface
  public interface Call<T, E extends Exception> {
    /**
     * Does the work.
     *
     * @return the result
     * @throws E whatever the work throws
     */
    T call() throws E;
  }

  /**
   * Runs {@code work} with {@code lease} as the current lease of this thread.
   *
   * @param lease the lease whose token fences the writes
   * @param work the work
   * @param <E> the checked exception the work may throw
   * @throws E what the work throws
   * @throws LeaseLostException if the lease is already known not to be held
   * @throws NullPointerException if an argument is null
   */
  public static <E extends Exception> void run(Lease lease, Work<E> work) throws E {
    Objects.requireNonNull(work, "work");
    call(
        lease,
        () -> {
          work.run();
          return null;
        });
  }

  /**
   * Runs {@code work} with {@code lease} as the current lease of this thread and returns its
   * result.
   *
   * @param lease the lease whose token fences the writes
   * @param work the work
   * @param <T> the result type
   * @param <E> the checked exception the work may throw
   * @return what the work returned
   * @throws E what the work throws
   * @throws LeaseLostException if the lease is already known not to be held
   * @throws NullPointerException if an argument is null
   */
  public static <T, E extends Exception> T call(Lease lease, Call<T, E> work) throws E {
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(work, "work");
    lease.checkHeld();
    Lease outer = CURRENT.get();
    CURRENT.set(lease);
    try {
      return work.call();
    } finally {
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }

  /** Returns the lease of the innermost scope on this thread, or empty outside any scope. */
  public static Optional<Lease> currentLease() {
    return Optional.ofNullable(CURRENT.get());
  }
}
