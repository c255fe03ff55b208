package dev.fencing.shedlock.internal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Maps any ShedLock lock name to a valid fencing resource name ({@code [A-Za-z0-9_.:/-]}, at most
 * 200 characters), injectively.
 *
 * <p>Characters other than {@code A-Z a-z 0-9 _ . / -} are written as {@code :XXXX}, the UTF-16
 * code unit in upper-case hex ({@code :} itself becomes {@code :003A}, {@code é} {@code :00E9}), so
 * every {@code :} of an encoded name starts a four-digit escape and the encoding can be read back.
 * An encoded name that does not fit is cut and followed by {@code :H} and the SHA-256 of the whole
 * name in hex: {@code :H} never appears in an uncut encoding, so a cut name never equals an uncut
 * one, and two cut names are equal only if their names' SHA-256 are.
 */
public final class LockNames {

  /** The longest resource name. */
  public static final int MAX_LENGTH = 200;

  /** The longest prefix accepted, leaving room for the name. */
  public static final int MAX_PREFIX_LENGTH = 100;

  private static final String HASH_MARK = ":H";
  private static final int HASH_HEX_LENGTH = 64;

  private LockNames() {}

  /**
   * Returns the resource for the lock {@code name}.
   *
   * @param prefix a valid, constant prefix (see {@link #validatePrefix})
   * @param name the ShedLock lock name
   * @return the resource name
   * @throws IllegalArgumentException if {@code name} is null or empty
   */
  public static String toResource(String prefix, String name) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a ShedLock lock name must not be null or empty");
    }
    String encoded = encode(name);
    if (prefix.length() + encoded.length() <= MAX_LENGTH) {
      return prefix + encoded;
    }
    int keep = MAX_LENGTH - prefix.length() - HASH_MARK.length() - HASH_HEX_LENGTH;
    return prefix + encoded.substring(0, keep) + HASH_MARK + sha256(name);
  }

  /**
   * Returns {@code prefix} if it is empty or made of resource-name characters and at most {@value
   * #MAX_PREFIX_LENGTH} long.
   *
   * @param prefix the prefix
   * @return the prefix
   * @throws IllegalArgumentException if it is invalid
   * @throws NullPointerException if it is null
   */
  public static String validatePrefix(String prefix) {
    if (prefix.length() > MAX_PREFIX_LENGTH || !prefix.matches("[A-Za-z0-9_.:/-]*")) {
      throw new IllegalArgumentException(
          "resourcePrefix must be at most "
              + MAX_PREFIX_LENGTH
              + " characters from A-Z a-z 0-9 _ . : / -, got \""
              + prefix
              + "\"");
    }
    return prefix;
  }

  private static String encode(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (isPlain(c)) {
        out.append(c);
      } else {
        out.append(':').append(HexFormat.of().withUpperCase().toHexDigits(c));
      }
    }
    return out.toString();
  }

  private static boolean isPlain(char c) {
    return (c >= 'A' && c <= 'Z')
        || (c >= 'a' && c <= 'z')
        || (c >= '0' && c <= '9')
        || c == '_'
        || c == '.'
        || c == '/'
        || c == '-';
  }

  /** Every UTF-16 unit as two bytes, unpaired surrogates included (an encoder would drop them). */
  private static byte[] utf16(String name) {
    byte[] bytes = new byte[name.length() * 2];
    for (int i = 0; i < name.length(); i++) {
      bytes[2 * i] = (byte) (name.charAt(i) >> 8);
      bytes[2 * i + 1] = (byte) name.charAt(i);
    }
    return bytes;
  }

  private static String sha256(String name) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(utf16(name)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
