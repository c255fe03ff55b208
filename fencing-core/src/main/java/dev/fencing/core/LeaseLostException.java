package dev.fencing.core;

/**
 * Thrown by {@link Lease#checkHeld()} and by fenced operations when the lease is no longer held: it
 * was lost (taken over, or not renewed in time) or already released.
 */
public class LeaseLostException extends FencingException {
  private static final long serialVersionUID = 1L;

  private final String resource;
  private final long token;

  /**
   * Creates the exception.
   *
   * @param resource the resource of the lease
   * @param token the lease's fencing token
   * @param why why the lease is not held
   */
  public LeaseLostException(String resource, FencingToken token, String why) {
    super("lease on \"" + resource + "\" with token " + token + " is no longer held: " + why);
    this.resource = resource;
    this.token = token.value();
  }

  /** Returns the resource of the lease. */
  public String resource() {
    return resource;
  }

  /** Returns the fencing token of the lost lease. */
  public FencingToken token() {
    return new FencingToken(token);
  }
}
