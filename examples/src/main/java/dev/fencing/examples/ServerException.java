package dev.fencing.examples;

/**
 * A server the example needs cannot be reached or started. Its message is one line meant for the
 * user (no stack trace needed); {@link App} prints it and exits with status 1.
 */
public final class ServerException extends Exception {

  private static final long serialVersionUID = 1L;

  public ServerException(String message, Throwable cause) {
    super(message, cause);
  }

  static String firstLine(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    int nl = m.indexOf('\n');
    return (nl >= 0 ? m.substring(0, nl) : m).trim();
  }

  /** The URL without its password, for messages. */
  static String redact(String url) {
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***")
        .replaceAll("(//[^/@:]*:)[^@/]*@", "$1***@");
  }
}
