package dev.fencing.jdbc.internal;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A small lexer for the two databases: enough to tell literals, quoted identifiers, comments,
 * statement separators and parentheses apart, under each way the server may read the same text.
 * Nothing of the grammar beyond that.
 *
 * <p>The readings ({@link Reading}): PostgreSQL with {@code standard_conforming_strings} on (a
 * backslash is an ordinary character in {@code '...'}; {@code E'...'} has backslash escapes; quoted
 * identifiers; dollar quotes; line comments and nested block comments), PostgreSQL with it off
 * (backslash escapes in {@code '...'} too), and MariaDB (backslash escapes in {@code '...'} and
 * {@code "..."}, which is a string unless {@code ANSI_QUOTES}; backquoted identifiers; {@code #}
 * and {@code -- } line comments; block comments that do not nest, {@code /*!...*}{@code /}
 * executed; no dollar quotes). A session can switch between the PostgreSQL readings at any time
 * ({@code SET}), and MariaDB's {@code NO_BACKSLASH_ESCAPES} turns its escapes off; so the library
 * never relies on one reading where another is possible: a fragment must read the same under all of
 * them, and a judgement that errs on one side takes every reading into account.
 */
public final class SqlLexer {

  /** A way a server reads SQL text. */
  enum Reading {
    /** PostgreSQL, {@code standard_conforming_strings = on}. */
    POSTGRES_STANDARD,
    /** PostgreSQL, {@code standard_conforming_strings = off}. */
    POSTGRES_ESCAPING,
    /** MariaDB, backslash escapes on (the default {@code sql_mode}). */
    MARIADB;

    boolean postgres() {
      return this != MARIADB;
    }
  }

  /** The dialect a fragment is written for. */
  public enum Dialect {
    /** PostgreSQL, under either setting of {@code standard_conforming_strings}. */
    POSTGRES,
    /** MariaDB, with or without {@code NO_BACKSLASH_ESCAPES} or {@code ANSI_QUOTES}. */
    MARIADB
  }

  private static final List<Reading> ALL_READINGS = List.of(Reading.values());

  private static final Set<String> TRANSACTION_CONTROL =
      Set.of("COMMIT", "END", "ROLLBACK", "ABORT", "BEGIN", "START", "PREPARE", "CALL", "DO");

  private final String sql;
  private final Reading reading;
  private int at;

  /**
   * Set by {@link #skipToken()}: the last string literal skipped had a backslash where some reading
   * may take it as an escape ({@code '...'} on PostgreSQL, {@code '...'} or {@code "..."} on
   * MariaDB).
   */
  private boolean backslashInLiteral;

  private SqlLexer(String sql, Reading reading) {
    this.sql = sql;
    this.reading = reading;
  }

  /**
   * Checks that a PostgreSQL fragment can be pasted into generated SQL as one expression or list.
   *
   * @see #requireFragment(Dialect, String, String)
   */
  public static String requireFragment(String what, String fragment) {
    return requireFragment(Dialect.POSTGRES, what, fragment);
  }

  /**
   * Checks that a fragment can be pasted into generated SQL as one expression or list, read the
   * same way by every reading of its dialect: no comment (on MariaDB no {@code #} and no {@code --}
   * at all), no {@code ;}, parentheses balanced and never closing more than were opened, every
   * literal and quoted identifier terminated, and no backslash in a string literal that another
   * setting of the session would read as an escape (on PostgreSQL in {@code '...'} but not in
   * {@code E'...'}; on MariaDB in {@code '...'} and {@code "..."}, and nowhere else but in
   * backquotes).
   *
   * @param dialect the database the fragment is sent to
   * @param what the fragment's name, for the message
   * @param fragment the fragment
   * @return {@code fragment}
   * @throws IllegalArgumentException naming {@code what} if the fragment is null, blank or could
   *     escape its place
   */
  public static String requireFragment(Dialect dialect, String what, String fragment) {
    if (fragment == null) {
      throw new IllegalArgumentException(what + " must not be null");
    }
    if (fragment.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
    String problem = fragmentProblem(dialect, fragment);
    if (problem != null) {
      throw new IllegalArgumentException(
          what
              + " must be one SQL expression that stays in its place: "
              + problem
              + " in \""
              + fragment
              + "\"");
    }
    return fragment;
  }

  private static String fragmentProblem(Dialect dialect, String fragment) {
    if (dialect == Dialect.MARIADB) {
      String problem = mariaDbOnlyProblem(fragment);
      if (problem != null) {
        return problem;
      }
      return new SqlLexer(fragment, Reading.MARIADB).fragmentProblem(true);
    }
    return new SqlLexer(fragment, Reading.POSTGRES_STANDARD).fragmentProblem(true);
  }

  /**
   * What MariaDB may read as a comment or an escape outside a quote: {@code #}, {@code --} (a
   * comment when a space follows, but refused in any form), and any backslash outside quotes.
   */
  private static String mariaDbOnlyProblem(String fragment) {
    SqlLexer lexer = new SqlLexer(fragment, Reading.MARIADB);
    while (lexer.at < fragment.length()) {
      char c = fragment.charAt(lexer.at);
      if (c == '#' || fragment.startsWith("--", lexer.at)) {
        return "a comment (MariaDB reads # and -- as the start of one)";
      }
      if (c == '\\') {
        return "a backslash outside a literal";
      }
      if (c == '\'' || c == '"' || c == '`') {
        if (lexer.skipToken() != null) {
          return null; // fragmentProblem names it
        }
      } else {
        lexer.at++;
      }
    }
    return null;
  }

  /**
   * Whether {@code sql} is one statement that a prefix can be put in front of under every reading:
   * no {@code ;}, no comment, parentheses balanced, every literal and quoted identifier terminated,
   * no backslash in a literal that a reading takes as an escape.
   *
   * @param sql plain SQL
   * @return whether it is such a statement
   */
  static boolean isOneStatement(String sql) {
    if (sql == null || sql.isBlank() || mariaDbOnlyProblem(sql) != null) {
      return false;
    }
    for (Reading reading : ALL_READINGS) {
      if (new SqlLexer(sql, reading).fragmentProblem(true) != null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether PostgreSQL may read {@code sql} differently depending on {@code
   * standard_conforming_strings}: some {@code '...'} literal (not {@code E'...'}, outside comments
   * and dollar quotes) holds a backslash, or the text does not lex at all. Text for which this is
   * false has the same tokens under both settings.
   *
   * @param sql plain SQL
   * @return whether its reading depends on the setting
   */
  static boolean readingDependsOnStringSetting(String sql) {
    SqlLexer lexer = new SqlLexer(sql, Reading.POSTGRES_STANDARD);
    while (lexer.at < sql.length()) {
      if (lexer.startsComment()) {
        if (lexer.skipComment() != null) {
          return true;
        }
      } else {
        if (lexer.skipToken() != null || lexer.backslashInLiteral) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The tokens of {@code sql} as PostgreSQL reads it with {@code standard_conforming_strings} on,
   * without whitespace and comments: each as its start and end offset (a literal, quoted name or
   * dollar quote is one token; a word; any other character). Null if the text does not lex.
   *
   * @param sql plain SQL
   * @return the tokens, or null
   */
  static List<int[]> tokens(String sql) {
    SqlLexer lexer = new SqlLexer(sql, Reading.POSTGRES_STANDARD);
    List<int[]> tokens = new java.util.ArrayList<>();
    while (lexer.at < sql.length()) {
      if (Character.isWhitespace(sql.charAt(lexer.at))) {
        lexer.at++;
      } else if (lexer.startsComment()) {
        if (lexer.skipComment() != null) {
          return null;
        }
      } else {
        int start = lexer.at;
        if (lexer.skipToken() != null) {
          return null;
        }
        tokens.add(new int[] {start, lexer.at});
      }
    }
    return tokens;
  }

  /**
   * Whether running {@code sql} may end, roll back (fully or to a savepoint) or start a
   * transaction, under any reading of either database: any statement in it starts with a
   * transaction-control keyword, or calls a procedure or an anonymous block (which may commit).
   * Errs on the side of yes.
   *
   * @param sql plain SQL, possibly several statements
   * @return whether the transaction may be another one after it ran
   */
  public static boolean mayControlTransaction(String sql) {
    if (sql == null) {
      return false;
    }
    for (Reading reading : ALL_READINGS) {
      if (new SqlLexer(sql, reading).mayControlTransaction()) {
        return true;
      }
    }
    return false;
  }

  private boolean mayControlTransaction() {
    boolean statementStart = true;
    while (at < sql.length()) {
      char c = sql.charAt(at);
      if (Character.isWhitespace(c)) {
        at++;
      } else if (startsComment()) {
        if (!reading.postgres() && sql.startsWith("/*!", at)) {
          return true; // executed by MariaDB
        }
        if (skipComment() != null) {
          return true;
        }
      } else if (c == ';') {
        statementStart = true;
        at++;
      } else if (statementStart && Character.isLetter(c)) {
        int start = at;
        while (at < sql.length() && Character.isLetter(sql.charAt(at))) {
          at++;
        }
        String word = sql.substring(start, at).toUpperCase(Locale.ROOT);
        if (TRANSACTION_CONTROL.contains(word)) {
          return true;
        }
        statementStart = false;
      } else {
        statementStart = false;
        if (skipToken() != null) {
          return true;
        }
      }
    }
    return false;
  }

  private String fragmentProblem(boolean refuseEscapes) {
    int depth = 0;
    while (at < sql.length()) {
      char c = sql.charAt(at);
      if (startsComment()) {
        return "a comment";
      }
      switch (c) {
        case ';' -> {
          return "';' outside a literal";
        }
        case '(' -> {
          depth++;
          at++;
        }
        case ')' -> {
          if (--depth < 0) {
            return "')' without its '('";
          }
          at++;
        }
        default -> {
          String problem = skipToken();
          if (problem != null) {
            return problem;
          }
          if (refuseEscapes && backslashInLiteral) {
            return reading.postgres()
                ? "a backslash in a '...' literal, which PostgreSQL reads as an escape when"
                    + " standard_conforming_strings is off (bind the value as a parameter, or"
                    + " write E'...')"
                : "a backslash in a literal, which MariaDB reads as an escape unless sql_mode has"
                    + " NO_BACKSLASH_ESCAPES (bind the value as a parameter)";
          }
        }
      }
    }
    return depth == 0 ? null : "'(' without its ')'";
  }

  private boolean startsComment() {
    if (sql.startsWith("--", at) || sql.startsWith("/*", at)) {
      return true;
    }
    return !reading.postgres() && sql.charAt(at) == '#';
  }

  /** Skips a comment; returns a problem if it is not terminated. */
  private String skipComment() {
    if (sql.startsWith("--", at) || sql.charAt(at) == '#') {
      int end = sql.indexOf('\n', at);
      at = end < 0 ? sql.length() : end + 1;
      return null;
    }
    if (!reading.postgres()) {
      int end = sql.indexOf("*/", at + 2);
      if (end < 0) {
        return "an unterminated comment";
      }
      at = end + 2;
      return null;
    }
    int depth = 0;
    while (at < sql.length()) {
      if (sql.startsWith("/*", at)) {
        depth++;
        at += 2;
      } else if (sql.startsWith("*/", at)) {
        at += 2;
        if (--depth == 0) {
          return null;
        }
      } else {
        at++;
      }
    }
    return "an unterminated comment";
  }

  /** Skips one literal, quoted identifier, dollar quote, word or other character. */
  private String skipToken() {
    backslashInLiteral = false;
    char c = sql.charAt(at);
    if (c == '\'') {
      boolean extended = at > 0 && (sql.charAt(at - 1) == 'E' || sql.charAt(at - 1) == 'e');
      if (extended && at > 1 && isIdentifierPart(sql.charAt(at - 2))) {
        extended = false;
      }
      boolean escapes = extended || reading != Reading.POSTGRES_STANDARD;
      boolean ambiguous = !(reading.postgres() && extended);
      return skipQuoted('\'', escapes, ambiguous, "a string literal");
    }
    if (c == '"') {
      return reading.postgres()
          ? skipQuoted('"', false, false, "a quoted identifier")
          : skipQuoted('"', true, true, "a double-quoted literal");
    }
    if (c == '`' && !reading.postgres()) {
      return skipQuoted('`', false, false, "a quoted identifier");
    }
    if (reading.postgres() && c == '$' && (at == 0 || !isIdentifierPart(sql.charAt(at - 1)))) {
      int tagEnd = at + 1;
      while (tagEnd < sql.length() && isTagPart(sql.charAt(tagEnd), tagEnd == at + 1)) {
        tagEnd++;
      }
      if (tagEnd < sql.length() && sql.charAt(tagEnd) == '$') {
        String tag = sql.substring(at, tagEnd + 1);
        int close = sql.indexOf(tag, tagEnd + 1);
        if (close < 0) {
          return "an unterminated dollar-quoted string";
        }
        at = close + tag.length();
        return null;
      }
    }
    if (isIdentifierPart(c)) {
      while (at < sql.length() && isIdentifierPart(sql.charAt(at))) {
        at++;
      }
      return null;
    }
    at++;
    return null;
  }

  /**
   * Skips a quoted token. {@code escapes}: a backslash escapes the next character in this reading;
   * {@code ambiguous}: another reading of the same text may take a backslash here differently.
   */
  private String skipQuoted(char quote, boolean escapes, boolean ambiguous, String what) {
    at++;
    while (at < sql.length()) {
      char c = sql.charAt(at);
      if (c == '\\') {
        backslashInLiteral |= ambiguous;
        at += escapes ? 2 : 1;
      } else if (c == quote) {
        if (at + 1 < sql.length() && sql.charAt(at + 1) == quote) {
          at += 2;
        } else {
          at++;
          return null;
        }
      } else {
        at++;
      }
    }
    return "an unterminated " + what.substring(2);
  }

  private static boolean isIdentifierPart(char c) {
    return Character.isLetterOrDigit(c) || c == '_' || c == '$';
  }

  private static boolean isTagPart(char c, boolean first) {
    return Character.isLetter(c) || c == '_' || (!first && Character.isDigit(c));
  }
}
