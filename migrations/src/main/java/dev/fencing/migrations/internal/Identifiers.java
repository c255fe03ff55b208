package dev.fencing.migrations.internal;

import java.util.regex.Pattern;

/** Validation and quoting of the identifiers that end up in generated SQL. */
public final class Identifiers {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private Identifiers() {}

  /**
   * Checks a schema (or other single) identifier.
   *
   * @param what what the value is, for the message
   * @param value the value
   * @return the value
   * @throws IllegalArgumentException naming the value if it is not a plain identifier
   */
  public static String requireIdentifier(String what, String value) {
    if (value == null || !IDENTIFIER.matcher(value).matches()) {
      throw new IllegalArgumentException(
          "invalid "
              + what
              + " "
              + describe(value)
              + ": expected a plain identifier [A-Za-z_][A-Za-z0-9_]* of at most 63 characters");
    }
    return value;
  }

  /**
   * Checks a table name, {@code table} or {@code schema.table}.
   *
   * @param value the value
   * @return the value
   * @throws IllegalArgumentException naming the value if it is not valid
   */
  public static String requireTableName(String value) {
    if (value == null) {
      throw new IllegalArgumentException("invalid table name null");
    }
    int dot = value.indexOf('.');
    boolean ok =
        dot < 0
            ? IDENTIFIER.matcher(value).matches()
            : IDENTIFIER.matcher(value.substring(0, dot)).matches()
                && IDENTIFIER.matcher(value.substring(dot + 1)).matches();
    if (!ok) {
      throw new IllegalArgumentException(
          "invalid table name "
              + describe(value)
              + ": expected table or schema.table, each part a plain identifier"
              + " [A-Za-z_][A-Za-z0-9_]* of at most 63 characters");
    }
    return value;
  }

  /**
   * Quotes an already validated table name part by part: {@code a.b} becomes {@code "a"."b"}.
   *
   * @param validatedName a name accepted by {@link #requireTableName} or {@link #requireIdentifier}
   * @return the quoted name
   */
  public static String quote(String validatedName) {
    StringBuilder sb = new StringBuilder();
    for (String part : validatedName.split("\\.", -1)) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append('"').append(part.replace("\"", "\"\"")).append('"');
    }
    return sb.toString();
  }

  private static String describe(String value) {
    if (value == null) {
      return "null";
    }
    return "'" + value + "'";
  }
}
