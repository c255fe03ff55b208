package dev.fencing.jdbc.internal;

import java.util.Locale;
import java.util.Set;

/**
 * The conservative judgement for SQL the rewriter cannot analyse: it may write a fenced table if
 * some word of it is a writing keyword and the name of some fenced table occurs in it (or a Unicode
 * escape, which could spell one). Over-counts on purpose (words in comments and literals count
 * too); never looks at structure. Without jOOQ on the class path it is the only judgement, so every
 * write that might touch a fenced table is refused rather than run unguarded.
 */
final class WriteScreen implements PlainDmlGuard.Planner {

  private static final Set<String> WRITE_WORDS =
      Set.of("insert", "update", "delete", "merge", "copy", "truncate", "call", "do", "execute");

  private final FencedTables tables;

  WriteScreen(FencedTables tables) {
    this.tables = tables;
  }

  boolean mayWriteFencedTable(String sql) {
    boolean writes = false;
    boolean namesFenced = false;
    int start = -1;
    for (int i = 0; i <= sql.length(); i++) {
      char c = i < sql.length() ? sql.charAt(i) : ' ';
      boolean wordChar = Character.isLetterOrDigit(c) || c == '_' || c == '$';
      if (wordChar && start < 0) {
        start = i;
      } else if (!wordChar && start >= 0) {
        String word = sql.substring(start, i);
        writes |= WRITE_WORDS.contains(word.toLowerCase(Locale.ROOT));
        namesFenced |= tables.anyNamedLike(word);
        start = -1;
      }
    }
    return writes && (namesFenced || tables.anyNameContainedIn(sql) || hasUnicodeEscapes(sql));
  }

  /** {@code U&"..."} can spell any name without its letters: {@code U&"\0069tems"}. */
  private static boolean hasUnicodeEscapes(String sql) {
    String lower = sql.toLowerCase(Locale.ROOT);
    return lower.contains("u&\"") || lower.contains("u&'");
  }

  /** Used alone when jOOQ is not on the class path: refuses what may write a fenced table. */
  @Override
  public PlainDmlGuard.Plan plan(String sql) {
    return mayWriteFencedTable(sql)
        ? PlainDmlGuard.refused(
            sql,
            "jOOQ, which the rewriter needs, is not on the class path, and it may write a fenced table")
        : PlainDmlGuard.PassThrough.INSTANCE;
  }
}
