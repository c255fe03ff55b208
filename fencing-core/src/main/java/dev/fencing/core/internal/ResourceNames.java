package dev.fencing.core.internal;

import java.util.regex.Pattern;

/** Validation of resource names, shared by every module. */
public final class ResourceNames {

  /** The longest resource name accepted. */
  public static final int MAX_LENGTH = 200;

  private static final Pattern ALLOWED = Pattern.compile("[A-Za-z0-9_.:/-]+");

  private ResourceNames() {}

  /**
   * Returns {@code resource} if it is a valid resource name.
   *
   * @throws IllegalArgumentException if it is null, blank, longer than {@link #MAX_LENGTH} or has
   *     other characters than {@code A-Z a-z 0-9 _ . : / -}
   */
  public static String validate(String resource) {
    if (resource == null) {
      throw new IllegalArgumentException("resource name must not be null");
    }
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource name must not be blank");
    }
    if (resource.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "resource name must be at most " + MAX_LENGTH + " characters, got " + resource.length());
    }
    if (!ALLOWED.matcher(resource).matches()) {
      throw new IllegalArgumentException(
          "resource name may only contain A-Z a-z 0-9 _ . : / -, got \""
              + printable(resource)
              + "\"");
    }
    return resource;
  }

  private static String printable(String value) {
    StringBuilder out = new StringBuilder();
    value
        .codePoints()
        .limit(60)
        .forEach(
            c -> {
              if (Character.isISOControl(c)) {
                out.append(String.format("\\u%04x", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }
}
