package dev.fencing.jdbc.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The conservative judgement for SQL that is not analysed: it may write a fenced table if some word
 * of it is a writing keyword and some identifier in it may name a fenced table, or a relation whose
 * writes reach one (a cascading foreign key, a rule or view, inheritance; for {@code TRUNCATE},
 * every table a {@code CASCADE} empties), or it has a Unicode escape, which could spell any name.
 *
 * <p>Identifiers are compared as the server resolves them: an unquoted word folded (PostgreSQL:
 * ASCII lower case, cut to 63 bytes; MariaDB: compared without case), a quoted one exactly; {@code
 * schema.name} only with that schema's table, an unqualified name (or one whose qualifier is not
 * plainly in front of it) with the tables of that name in every schema, since any session may have
 * any search path. Over-counts on purpose: words in comments and literals count too (a {@code DO}
 * block's body is a literal). Never looks at structure.
 */
final class WriteScreen implements PlainDmlGuard.Planner {

  /** How the server folds and quotes identifiers. */
  enum Folding {
    POSTGRES,
    MARIADB
  }

  private static final Set<String> WRITE_WORDS =
      Set.of(
          "insert",
          "update",
          "delete",
          "merge",
          "copy",
          "truncate",
          "call",
          "do",
          "execute",
          "replace",
          "load",
          "alter",
          "drop",
          "rename");

  private static final int POSTGRES_NAME_BYTES = 63;

  private final Folding folding;
  private final Map<String, Map<String, String>> writes;
  private final Map<String, Map<String, String>> truncates;
  private final String refusal;

  /**
   * A screen over the fenced tables that {@code targets} accepts.
   *
   * @param refusal why the statement is not rewritten, for the refusal of {@link #plan}
   */
  WriteScreen(
      FencedTables tables, Predicate<FencedTables.Table> targets, Folding folding, String refusal) {
    this.folding = folding;
    this.refusal = refusal;
    this.writes = new HashMap<>();
    this.truncates = new HashMap<>();
    tables.tables(targets).forEach((relation, table) -> add(writes, relation, table.toString()));
    tables
        .reaching(FencedTables.Write.UPDATE_OR_DELETE, targets)
        .forEach((relation, table) -> add(writes, relation, relation + ", which writes " + table));
    tables
        .reaching(FencedTables.Write.TRUNCATE, targets)
        .forEach(
            (relation, table) ->
                add(
                    truncates,
                    relation,
                    relation + ", whose TRUNCATE ... CASCADE empties " + table));
  }

  /** A screen over every table of {@code tables}. */
  WriteScreen(FencedTables tables) {
    this(tables, table -> true, Folding.POSTGRES, "plain SQL is not rewritten");
  }

  private void add(
      Map<String, Map<String, String>> names, FencedTables.Relation relation, String what) {
    names
        .computeIfAbsent(stored(relation.name()), name -> new HashMap<>())
        .putIfAbsent(stored(relation.schema()), what);
  }

  /** A stored name as it is compared: exact on PostgreSQL, without case on MariaDB. */
  private String stored(String name) {
    return folding == Folding.MARIADB ? name.toLowerCase(Locale.ROOT) : name;
  }

  /** Whether the screen has no name at all: then nothing is refused. */
  boolean isEmpty() {
    return writes.isEmpty() && truncates.isEmpty();
  }

  boolean mayWriteFencedTable(String sql) {
    return mayWrite(sql) != null;
  }

  /**
   * What {@code sql} may write: a description of the fenced table (or of the relation that writes
   * one) it names, or of the Unicode escape; null if it may write none.
   */
  String mayWrite(String sql) {
    if (isEmpty()) {
      return null;
    }
    List<Token> tokens = tokens(sql);
    boolean writesSomething = false;
    boolean truncate = false;
    boolean unicode = false;
    String named = null;
    String namedForTruncate = null;
    for (int i = 0; i < tokens.size(); i++) {
      Token token = tokens.get(i);
      if (token.kind() == Kind.UNICODE) {
        unicode = true;
        continue;
      }
      if (token.kind() != Kind.WORD) {
        continue;
      }
      if (!token.quoted()) {
        String lower = token.text().toLowerCase(Locale.ROOT);
        writesSomething |= WRITE_WORDS.contains(lower);
        truncate |= lower.equals("truncate");
      }
      String schema =
          i >= 2 && tokens.get(i - 1).kind() == Kind.DOT && tokens.get(i - 2).kind() == Kind.WORD
              ? tokens.get(i - 2).text()
              : null;
      if (named == null) {
        named = match(writes, schema, token.text());
      }
      if (namedForTruncate == null) {
        namedForTruncate = match(truncates, schema, token.text());
      }
    }
    if (!writesSomething) {
      return null;
    }
    if (named != null) {
      return named;
    }
    if (truncate && namedForTruncate != null) {
      return namedForTruncate;
    }
    return unicode ? "a Unicode escape (U&), which can spell the name of any table" : null;
  }

  private static String match(Map<String, Map<String, String>> names, String schema, String name) {
    Map<String, String> schemas = names.get(name);
    if (schemas == null) {
      return null;
    }
    if (schema == null) {
      return schemas.values().iterator().next();
    }
    return schemas.get(schema);
  }

  private enum Kind {
    WORD,
    DOT,
    UNICODE,
    OTHER
  }

  /** A word as the server compares it (folded unless quoted), a dot, or anything else. */
  private record Token(Kind kind, String text, boolean quoted) {}

  private List<Token> tokens(String sql) {
    List<Token> tokens = new ArrayList<>();
    int at = 0;
    int length = sql.length();
    while (at < length) {
      char c = sql.charAt(at);
      if (Character.isWhitespace(c)) {
        at++;
      } else if ((c == 'u' || c == 'U')
          && at + 2 < length
          && sql.charAt(at + 1) == '&'
          && (sql.charAt(at + 2) == '"' || sql.charAt(at + 2) == '\'')) {
        tokens.add(new Token(Kind.UNICODE, "", false));
        at += 2;
      } else if (isWordPart(c)) {
        int start = at;
        while (at < length && isWordPart(sql.charAt(at))) {
          at++;
        }
        tokens.add(new Token(Kind.WORD, fold(sql.substring(start, at)), false));
      } else if (c == '"' || (c == '`' && folding == Folding.MARIADB)) {
        StringBuilder name = new StringBuilder();
        at++;
        while (at < length) {
          char d = sql.charAt(at);
          if (d == c) {
            if (at + 1 < length && sql.charAt(at + 1) == c) {
              name.append(c);
              at += 2;
              continue;
            }
            at++;
            break;
          }
          name.append(d);
          at++;
        }
        String text = name.toString();
        tokens.add(
            new Token(
                Kind.WORD,
                folding == Folding.MARIADB ? text.toLowerCase(Locale.ROOT) : text,
                true));
        if (folding == Folding.MARIADB) {
          // "..." is a string on MariaDB unless ANSI_QUOTES: the words inside count too
          tokens.addAll(tokens(text));
        }
      } else if (c == '.') {
        tokens.add(new Token(Kind.DOT, ".", false));
        at++;
      } else {
        tokens.add(new Token(Kind.OTHER, String.valueOf(c), false));
        at++;
      }
    }
    return tokens;
  }

  /** An unquoted identifier as the server stores it. */
  private String fold(String word) {
    if (folding == Folding.MARIADB) {
      return word.toLowerCase(Locale.ROOT);
    }
    StringBuilder folded = new StringBuilder(word.length());
    for (int i = 0; i < word.length(); i++) {
      char c = word.charAt(i);
      folded.append(c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c);
    }
    return truncateName(folded.toString());
  }

  /** PostgreSQL cuts identifiers to 63 bytes (NAMEDATALEN - 1), at a character boundary. */
  static String truncateName(String name) {
    byte[] bytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (bytes.length <= POSTGRES_NAME_BYTES) {
      return name;
    }
    int end = name.length();
    while (name.substring(0, end).getBytes(java.nio.charset.StandardCharsets.UTF_8).length
        > POSTGRES_NAME_BYTES) {
      end = Character.isLowSurrogate(name.charAt(end - 1)) ? end - 2 : end - 1;
    }
    return name.substring(0, end);
  }

  private static boolean isWordPart(char c) {
    return Character.isLetterOrDigit(c) || c == '_' || c == '$';
  }

  /** Used alone when plain SQL is not rewritten: refuses what may write a fenced table. */
  @Override
  public PlainDmlGuard.Plan plan(String sql) {
    String what = mayWrite(sql);
    return what == null
        ? PlainDmlGuard.PassThrough.INSTANCE
        : PlainDmlGuard.refused(sql, "it may write " + what + ", and " + refusal);
  }
}
