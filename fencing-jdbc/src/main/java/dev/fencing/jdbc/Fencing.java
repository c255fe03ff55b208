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

  /**
   * Enters a scope with {@code lease} on the calling thread, for frameworks whose lock and unlock
   * are two calls rather than one block around the work (a ShedLock {@code LockProvider}). Prefer
   * {@link #run} and {@link #call} in application code. The scope lasts until {@link Scope#close()}
   * is called on the same thread; scopes must be closed innermost first.
   *
   * @param lease the lease whose token fences the writes
   * @return the open scope
   * @throws LeaseLostException if the lease is already known not to be held
   * @throws NullPointerException if {@code lease} is null
   */
  public static Scope enter(Lease lease) {
    Objects.requireNonNull(lease, "lease");
    lease.checkHeld();
    Scope scope = new Scope(lease, CURRENT.get(), Thread.currentThread());
    CURRENT.set(lease);
    return scope;
  }

  /** A scope opened by {@link #enter(Lease)}; closing it restores the enclosing scope. */
  public static final class Scope implements AutoCloseable {
    private final Lease lease;
    private final Lease outer;
    private final Thread thread;
    private boolean closed;

    private Scope(Lease lease, Lease outer, Thread thread) {
      this.lease = lease;
      this.outer = outer;
      this.thread = thread;
    }

    /** {@return the lease of this scope} */
    public Lease lease() {
      return lease;
    }

    /**
     * Ends the scope on this thread and restores the enclosing one. Closing twice does nothing.
     *
     * @throws IllegalStateException if called on another thread than the one that entered the
     *     scope, or while an inner scope is still open
     */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      if (Thread.currentThread() != thread) {
        throw new IllegalStateException(
            "a fencing scope must be closed on the thread that entered it ("
                + thread.getName()
                + "), not on "
                + Thread.currentThread().getName());
      }
      if (CURRENT.get() != lease) {
        throw new IllegalStateException(
            "an inner fencing scope is still open on this thread: close scopes innermost first");
      }
      closed = true;
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }

  /** {@return the lease of the innermost scope on this thread, or empty outside any scope} */
  public static Optional<Lease> currentLease() {
    return Optional.ofNullable(CURRENT.get());
  }
}
