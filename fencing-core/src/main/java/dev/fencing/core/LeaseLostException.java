package dev.fencing.core;

/**
 * Thrown by {@link Lease#checkHeld()} and by fenced operations when the lease is no longer held: it
 * was lost (taken over, or not renewed in time) or already released.
 */
public class LeaseLostException extends FencingException {
  private static final long serialVersionUID = 1L;

  /** The resource of the lease. */
  private final String resource;

  /** The fencing token of the lease. */
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

  /** {@return the resource of the lease} */
  public String resource() {
    return resource;
  }

  /** {@return the fencing token of the lost lease} */
  public FencingToken token() {
    return new FencingToken(token);
  }
}
