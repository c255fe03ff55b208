package dev.fencing.jdbc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.QueryPart;
import org.jooq.Select;
import org.jooq.SelectFieldOrAsterisk;
import org.jooq.VisitContext;
import org.jooq.VisitListener;
import org.jooq.impl.DSL;
import org.jooq.impl.QOM;

/**
 * Where jOOQ would render an operator with another meaning than PostgreSQL gave it, renders it as
 * PostgreSQL reads it, from the parsed operands: {@code a || b} (jOOQ casts both sides to varchar,
 * which turns an array or jsonb concatenation into a string one), {@code LIKE} and {@code ILIKE}
 * (jOOQ casts both sides to varchar, which changes them for citext or char(n)), {@code x = ANY(e)}
 * (jOOQ reads {@code e} as the one element of an array and renders {@code ANY(ARRAY[e])}). Every
 * replacement is parenthesized, so it binds as the parsed operator did.
 *
 * <p>Before parsing, two spellings jOOQ's parser does not read as PostgreSQL does are respelled
 * with the same meaning ({@link #respell}): {@code ESCAPE ''} (no escape character, which jOOQ
 * cannot parse) and {@code INTERVAL '...'} (which jOOQ re-renders in its own normalized spelling,
 * and {@code '36 hours'} is not {@code '1 day 12 hours'} across a daylight saving change) as {@code
 * CAST('...' AS interval)}, which PostgreSQL reads exactly as the typed literal.
 */
final class FaithfulRendering implements VisitListener {

  /**
   * Stands for "no escape character" between {@link #respell} and rendering; a string holding it is
   * never respelled, so any occurrence in the parsed model comes from the respelling.
   */
  static final char NO_ESCAPE = '\uE000';

  private DSLContext dsl;

  /** The renderer this listener belongs to, set once it is built. */
  void renderWith(DSLContext renderer) {
    this.dsl = renderer;
  }

  @Override
  public void visitStart(VisitContext context) {
    QueryPart replacement = faithful(context.queryPart());
    if (replacement != null) {
      context.queryPart(replacement);
    }
  }

  private static QueryPart faithful(QueryPart part) {
    if (part instanceof QOM.Like like) {
      return like(like.$value(), "like", like.$pattern(), like.$escape());
    }
    if (part instanceof QOM.NotLike like) {
      return like(like.$value(), "not like", like.$pattern(), like.$escape());
    }
    if (part instanceof QOM.LikeIgnoreCase like) {
      return like(like.$value(), "ilike", like.$pattern(), like.$escape());
    }
    if (part instanceof QOM.NotLikeIgnoreCase like) {
      return like(like.$value(), "not ilike", like.$pattern(), like.$escape());
    }
    if (part instanceof QOM.Concat concat) {
      List<? extends Field<?>> operands = concat.$arg1();
      StringBuilder template = new StringBuilder("(");
      for (int i = 0; i < operands.size(); i++) {
        template.append(i == 0 ? "{" : " || {").append(i).append('}');
      }
      return DSL.field(template.append(')').toString(), Object.class, operands.toArray());
    }
    String operator = quantifiedOperator(part);
    if (operator != null) {
      List<?> args = quantifiedArgs(part);
      if (args.get(1) instanceof QOM.QuantifiedArray<?> array
          && array.$array() instanceof QOM.Array<?> elements
          && elements.$elements().size() == 1) {
        return DSL.condition(
            "({0} " + operator + " " + quantifier(array.$quantifier()) + " ({1}))",
            args.get(0),
            elements.$elements().get(0));
      }
    }
    return null;
  }

  private static Condition like(Field<?> value, String operator, Field<?> pattern, Character c) {
    if (c == null) {
      return DSL.condition("({0} " + operator + " {1})", value, pattern);
    }
    return DSL.condition(
        "({0} " + operator + " {1} escape {2})",
        value,
        pattern,
        DSL.inline(c == NO_ESCAPE ? "" : String.valueOf(c)));
  }

  private static String quantifier(QOM.Quantifier quantifier) {
    return quantifier == QOM.Quantifier.ALL ? "all" : "any";
  }

  /** Whether {@code part} compares with {@code ANY} or {@code ALL}. */
  static boolean isQuantifiedComparison(Object part) {
    return quantifiedOperator(part) != null;
  }

  private static String quantifiedOperator(Object part) {
    if (part instanceof QOM.EqQuantified<?>) {
      return "=";
    }
    if (part instanceof QOM.NeQuantified<?>) {
      return "<>";
    }
    if (part instanceof QOM.LtQuantified<?>) {
      return "<";
    }
    if (part instanceof QOM.LeQuantified<?>) {
      return "<=";
    }
    if (part instanceof QOM.GtQuantified<?>) {
      return ">";
    }
    if (part instanceof QOM.GeQuantified<?>) {
      return ">=";
    }
    return null;
  }

  /** The two operands of a quantified comparison. */
  static List<?> quantifiedArgs(Object part) {
    if (part instanceof QOM.EqQuantified<?> x) {
      return x.$args();
    }
    if (part instanceof QOM.NeQuantified<?> x) {
      return x.$args();
    }
    if (part instanceof QOM.LtQuantified<?> x) {
      return x.$args();
    }
    if (part instanceof QOM.LeQuantified<?> x) {
      return x.$args();
    }
    if (part instanceof QOM.GtQuantified<?> x) {
      return x.$args();
    }
    if (part instanceof QOM.GeQuantified<?> x) {
      return x.$args();
    }
    throw new IllegalArgumentException("not a quantified comparison: " + part.getClass());
  }

  /**
   * Whether the subquery renders exactly as the one rebuilt from the parts the rewriter checks
   * (select list, DISTINCT, FROM, WHERE, GROUP BY, HAVING): if not, the model has a part the checks
   * did not see (a set operation, a locking clause, ...).
   */
  boolean rendersAsRebuilt(Select<?> select) {
    List<SelectFieldOrAsterisk> fields = new ArrayList<>(select.$select());
    var start = select.$distinct() ? DSL.selectDistinct(fields) : DSL.select(fields);
    var where =
        start
            .from(select.$from())
            .where(select.$where() == null ? DSL.noCondition() : select.$where());
    Select<?> rebuilt =
        select.$groupBy().isEmpty() && select.$having() == null
            ? where
            : where
                .groupBy(select.$groupBy())
                .having(select.$having() == null ? DSL.noCondition() : select.$having());
    return dsl.render(rebuilt).equals(dsl.render(select));
  }

  /**
   * The operands of jOOQ's date and time arithmetic ({@code current_timestamp - CAST('1 day' AS
   * interval)}), which its model does not show: null unless it renders exactly as {@code (a + b)}
   * or {@code (a - b)} of its two operands, which then keep PostgreSQL's meaning.
   */
  List<Field<?>> temporalOperands(QueryPart part) {
    // jOOQ renders it through internal wrappers of the same text: the operands are the first
    // level of the render tree with more than one part
    java.util.Map<Integer, List<QueryPart>> byDepth = new java.util.HashMap<>();
    int[] depth = {0};
    VisitListener recorder =
        new VisitListener() {
          @Override
          public void visitStart(VisitContext context) {
            byDepth.computeIfAbsent(depth[0]++, d -> new ArrayList<>()).add(context.queryPart());
          }

          @Override
          public void visitEnd(VisitContext context) {
            depth[0]--;
          }
        };
    String rendered = DSL.using(dsl.configuration().derive(recorder)).render(part);
    int level = 1;
    while (byDepth.containsKey(level + 1)
        && byDepth.get(level).size() == 1
        && dsl.render(byDepth.get(level).get(0)).equals(rendered)) {
      level++;
    }
    List<QueryPart> children = byDepth.getOrDefault(level, List.of());
    if (children.size() != 2
        || !(children.get(0) instanceof Field<?> left)
        || !(children.get(1) instanceof Field<?> right)) {
      return null;
    }
    for (String operator : List.of(" + ", " - ")) {
      if (rendered.equals("(" + dsl.render(left) + operator + dsl.render(right) + ")")) {
        return List.of(left, right);
      }
    }
    return null;
  }

  /**
   * Respells {@code ESCAPE ''} and {@code INTERVAL '...'} (outside comments, literals and quoted
   * names) for jOOQ's parser, with the same meaning; returns {@code sql} itself if there is none,
   * or it cannot tell. {@code sql} must lex the same under both settings of {@code
   * standard_conforming_strings}.
   */
  static String respell(String sql) {
    if (sql.indexOf(NO_ESCAPE) >= 0) {
      return sql;
    }
    List<int[]> tokens = SqlLexer.tokens(sql);
    if (tokens == null) {
      return sql;
    }
    StringBuilder out = null;
    int copied = 0;
    for (int i = 0; i + 1 < tokens.size(); i++) {
      String word = text(sql, tokens.get(i)).toLowerCase(Locale.ROOT);
      int[] literal = tokens.get(i + 1);
      String next = i + 2 < tokens.size() ? text(sql, tokens.get(i + 2)) : "";
      if (sql.charAt(literal[0]) != '\'' || next.startsWith("'") || follows(sql, tokens, i, ".")) {
        continue;
      }
      String replacement = null;
      if (word.equals("escape") && text(sql, literal).equals("''")) {
        replacement = "'" + NO_ESCAPE + "'";
      } else if (word.equals("interval")
          && !INTERVAL_FIELDS.contains(next.toLowerCase(Locale.ROOT))) {
        replacement = "cast(" + text(sql, literal) + " as interval)";
      }
      if (replacement != null) {
        out = out == null ? new StringBuilder(sql.length() + 16) : out;
        int from = word.equals("escape") ? literal[0] : tokens.get(i)[0];
        out.append(sql, copied, from).append(replacement);
        copied = literal[1];
      }
    }
    return out == null ? sql : out.append(sql, copied, sql.length()).toString();
  }

  private static final java.util.Set<String> INTERVAL_FIELDS =
      java.util.Set.of("year", "month", "day", "hour", "minute", "second", "to", "(");

  private static boolean follows(String sql, List<int[]> tokens, int i, String previous) {
    return i > 0 && text(sql, tokens.get(i - 1)).equals(previous);
  }

  private static String text(String sql, int[] token) {
    return sql.substring(token[0], token[1]);
  }
}
