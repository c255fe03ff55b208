package dev.fencing.jdbc.internal;

import java.util.Locale;
import java.util.Set;

/**
 * A small PostgreSQL lexer: enough to tell literals, quoted identifiers, comments, statement
 * separators and parentheses apart. It knows single-quoted strings (with {@code ''}, and backslash
 * escapes after {@code E}), quoted identifiers, dollar quotes ({@code $$...$$}, {@code
 * $tag$...$tag$}), line and block comments (nested), and nothing of the grammar beyond that.
 */
public final class SqlLexer {

  private static final Set<String> TRANSACTION_CONTROL =
      Set.of("COMMIT", "END", "ROLLBACK", "ABORT", "BEGIN", "START", "PREPARE", "CALL", "DO");

  private final String sql;
  private int at;

  private SqlLexer(String sql) {
    this.sql = sql;
  }

  /**
   * Checks that a fragment can be pasted into generated SQL as one expression or list: no comment,
   * no {@code ;}, parentheses balanced and never closing more than were opened, every literal and
   * quoted identifier terminated.
   *
   * @param what the fragment's name, for the message
   * @param fragment the fragment
   * @return {@code fragment}
   * @throws IllegalArgumentException naming {@code what} if the fragment is null, blank or could
   *     escape its place
   */
  public static String requireFragment(String what, String fragment) {
    if (fragment == null) {
      throw new IllegalArgumentException(what + " must not be null");
    }
    if (fragment.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
    String problem = new SqlLexer(fragment).fragmentProblem();
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

  /**
   * Whether {@code sql} is one statement that a prefix can be put in front of: no {@code ;}, no
   * comment, parentheses balanced, every literal and quoted identifier terminated.
   *
   * @param sql plain SQL
   * @return whether it is such a statement
   */
  static boolean isOneStatement(String sql) {
    return sql != null && !sql.isBlank() && new SqlLexer(sql).fragmentProblem() == null;
  }

  /**
   * Whether running {@code sql} may end, roll back (fully or to a savepoint) or start a
   * transaction: any statement in it starts with a transaction-control keyword, or calls a
   * procedure or an anonymous block (which may commit). Errs on the side of yes.
   *
   * @param sql plain SQL, possibly several statements
   * @return whether the transaction may be another one after it ran
   */
  public static boolean mayControlTransaction(String sql) {
    if (sql == null) {
      return false;
    }
    SqlLexer lexer = new SqlLexer(sql);
    boolean statementStart = true;
    while (lexer.at < sql.length()) {
      char c = sql.charAt(lexer.at);
      if (Character.isWhitespace(c)) {
        lexer.at++;
      } else if (lexer.startsComment()) {
        if (lexer.skipComment() != null) {
          return true;
        }
      } else if (c == ';') {
        statementStart = true;
        lexer.at++;
      } else if (statementStart && Character.isLetter(c)) {
        int start = lexer.at;
        while (lexer.at < sql.length() && Character.isLetter(sql.charAt(lexer.at))) {
          lexer.at++;
        }
        String word = sql.substring(start, lexer.at).toUpperCase(Locale.ROOT);
        if (TRANSACTION_CONTROL.contains(word)) {
          return true;
        }
        statementStart = false;
      } else {
        statementStart = false;
        if (lexer.skipToken() != null) {
          return true;
        }
      }
    }
    return false;
  }

  private String fragmentProblem() {
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
        }
      }
    }
    return depth == 0 ? null : "'(' without its ')'";
  }

  private boolean startsComment() {
    return sql.startsWith("--", at) || sql.startsWith("/*", at);
  }

  /** Skips a comment; returns a problem if it is not terminated. */
  private String skipComment() {
    if (sql.startsWith("--", at)) {
      int end = sql.indexOf('\n', at);
      at = end < 0 ? sql.length() : end + 1;
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
    char c = sql.charAt(at);
    if (c == '\'') {
      boolean escapes = at > 0 && (sql.charAt(at - 1) == 'E' || sql.charAt(at - 1) == 'e');
      if (escapes && at > 1 && isIdentifierPart(sql.charAt(at - 2))) {
        escapes = false;
      }
      return skipQuoted('\'', escapes, "a string literal");
    }
    if (c == '"') {
      return skipQuoted('"', false, "a quoted identifier");
    }
    if (c == '$' && (at == 0 || !isIdentifierPart(sql.charAt(at - 1)))) {
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

  private String skipQuoted(char quote, boolean backslashEscapes, String what) {
    at++;
    while (at < sql.length()) {
      char c = sql.charAt(at);
      if (backslashEscapes && c == '\\') {
        at += 2;
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
