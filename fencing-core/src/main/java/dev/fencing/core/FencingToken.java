package dev.fencing.core;

/**
 * A fencing token: the strictly increasing number handed out with every acquisition of a resource.
 *
 * <p>A database that remembers the highest token it has accepted for a resource can reject writes
 * that carry a lower one, which is what makes a stale lock holder harmless.
 *
 * @param value the token, always positive
 */
public record FencingToken(long value) implements Comparable<FencingToken> {

  /**
   * Creates a token.
   *
   * @param value see {@link #value()}
   * @throws IllegalArgumentException if {@code value} is zero or negative
   */
  public FencingToken {
    if (value <= 0) {
      throw new IllegalArgumentException("a fencing token is positive, got " + value);
    }
  }

  /**
   * Returns the token as a number, for binding to a statement.
   *
   * @param value the token value
   * @return the token
   * @throws IllegalArgumentException if {@code value} is zero or negative
   */
  public static FencingToken of(long value) {
    return new FencingToken(value);
  }

  /**
   * {@return whether this token was handed out after {@code other}}
   *
   * @param other the token to compare with
   */
  public boolean isNewerThan(FencingToken other) {
    return value > other.value;
  }

  @Override
  public int compareTo(FencingToken other) {
    return Long.compare(value, other.value);
  }

  @Override
  public String toString() {
    return Long.toString(value);
  }
}
