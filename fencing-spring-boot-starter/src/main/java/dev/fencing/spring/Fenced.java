package dev.fencing.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method (typically {@code @Scheduled}) while holding a fenced lease on {@link
 * #resource()}: the lease is acquired and registered in the database's fence, the method runs in
 * the {@link dev.fencing.jdbc.Fencing} scope (so every connection the application's {@code
 * DataSource} hands out on this thread is fenced), and the lease is released when the method
 * returns, after the transactions it started have completed.
 *
 * <p>Inside the method, {@code Fencing.currentLease()} returns the lease, and its {@code token()}
 * can be passed to other systems.
 *
 * <p>The advice runs outside {@code @Transactional}: a transaction that took its connection before
 * the lease existed could not be fenced. When the method is entered with a transaction (or a
 * transaction-bound connection) already on the thread, the call fails with an {@link
 * IllegalStateException} before acquiring anything.
 *
 * <p>The string attributes accept property placeholders ({@code "${billing.lease-time:1m}"}) and
 * durations in Spring Boot's formats ({@code "30s"}, {@code "PT30S"}).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Fenced {

  /** What to do when the lease cannot be acquired within {@link #maxWait()}. */
  enum OnUnavailable {
    /** Do not run the method; it returns {@code null} (use it on {@code void} methods). */
    SKIP,
    /** Throw {@link dev.fencing.core.LeaseUnavailableException}. */
    FAIL
  }

  /**
   * The resource the lease is on, shared by every instance that must not run the method at once.
   *
   * @return the resource name
   */
  String resource();

  /**
   * How long the lease lives on the server after acquisition and after each renewal.
   *
   * @return the lease time, as {@code "30s"} or {@code "5m"}
   */
  String leaseTime() default "1m";

  /**
   * How long to wait for the current holder; {@code "0s"} tries once.
   *
   * @return the longest wait, as {@code "0s"} or {@code "10s"}
   */
  String maxWait() default "0s";

  /**
   * Whether the lease renews itself while the method runs. With {@code false} the method must end
   * within {@link #leaseTime()}: its writes are rejected afterwards.
   *
   * @return whether the lease renews itself
   */
  boolean renew() default true;

  /**
   * What to do when another holder has the lease.
   *
   * @return skip the run, or fail
   */
  OnUnavailable onUnavailable() default OnUnavailable.SKIP;
}
