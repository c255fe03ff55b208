package dev.fencing.core;

/** Thrown when a {@link LeaseManager} is used after {@link LeaseManager#close()}. */
public class LeaseManagerClosedException extends FencingException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param what what was attempted
   */
  public LeaseManagerClosedException(String what) {
    super(what + ": the lease manager is closed");
  }
}
