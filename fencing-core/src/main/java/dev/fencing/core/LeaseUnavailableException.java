package dev.fencing.core;

import java.time.Duration;

/**
 * Thrown when a lease could not be acquired within the wait bound because another holder has it.
 */
public class LeaseUnavailableException extends FencingException {
  private static final long serialVersionUID = 1L;

  /** The resource that could not be acquired. */
  private final String resource;

  /**
   * Creates the exception.
   *
   * @param resource the resource that stayed held
   * @param waited how long the caller waited
   */
  public LeaseUnavailableException(String resource, Duration waited) {
    super("lease on \"" + resource + "\" is held by another holder; gave up after " + waited);
    this.resource = resource;
  }

  /**
   * Creates the exception for a wait that was interrupted.
   *
   * @param resource the resource waited for
   * @param cause the interruption
   */
  public LeaseUnavailableException(String resource, InterruptedException cause) {
    super("interrupted while waiting for the lease on \"" + resource + "\"", cause);
    this.resource = resource;
  }

  /** {@return the resource that could not be acquired} */
  public String resource() {
    return resource;
  }
}
