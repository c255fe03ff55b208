package dev.fencing.jdbc.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.jooq.Asterisk;
import org.jooq.DataType;
import org.jooq.Param;
import org.jooq.QualifiedAsterisk;
import org.jooq.Row;
import org.jooq.TableField;
import org.jooq.impl.QOM;

/**
 * Decides whether a parsed expression is one the plain-DML rewriter may keep: column references,
 * parameters, literals, operators, a short list of deterministic built-in functions without side
 * effects, and read-only subqueries of plain tables, which jOOQ renders back to the same PostgreSQL
 * meaning. Everything else (unknown or volatile functions, sequence calls, subqueries with set
 * operations, locks, joins or table functions, ...) is reported, so the statement is refused rather
 * than guessed at. Some operators jOOQ would render with another meaning ({@code ||} and {@code
 * LIKE} with casts to varchar, {@code = ANY(?)} as {@code = ANY(ARRAY[?])}) are accepted only
 * because {@link FaithfulRendering} renders them as written.
 */
final class SafeExpressions {

  private record Operator(Class<?> type, Function<Object, List<?>> arguments) {}

  private static final List<Operator> OPERATORS =
      List.of(
          op(QOM.And.class, x -> ((QOM.And) x).$args()),
          op(QOM.Or.class, x -> ((QOM.Or) x).$args()),
          op(QOM.Not.class, x -> ((QOM.Not) x).$args()),
          op(QOM.Eq.class, x -> ((QOM.Eq<?>) x).$args()),
          op(QOM.Ne.class, x -> ((QOM.Ne<?>) x).$args()),
          op(QOM.Lt.class, x -> ((QOM.Lt<?>) x).$args()),
          op(QOM.Le.class, x -> ((QOM.Le<?>) x).$args()),
          op(QOM.Gt.class, x -> ((QOM.Gt<?>) x).$args()),
          op(QOM.Ge.class, x -> ((QOM.Ge<?>) x).$args()),
          op(QOM.IsNull.class, x -> ((QOM.IsNull) x).$args()),
          op(QOM.IsNotNull.class, x -> ((QOM.IsNotNull) x).$args()),
          op(QOM.IsDistinctFrom.class, x -> ((QOM.IsDistinctFrom<?>) x).$args()),
          op(QOM.IsNotDistinctFrom.class, x -> ((QOM.IsNotDistinctFrom<?>) x).$args()),
          op(QOM.Between.class, x -> ((QOM.Between<?>) x).$args()),
          op(QOM.InList.class, x -> ((QOM.InList<?>) x).$args()),
          op(QOM.NotInList.class, x -> ((QOM.NotInList<?>) x).$args()),
          op(QOM.FieldCondition.class, x -> ((QOM.FieldCondition) x).$args()),
          op(QOM.ConditionAsField.class, x -> ((QOM.ConditionAsField) x).$args()),
          op(QOM.RowEq.class, x -> ((QOM.RowEq<?>) x).$args()),
          op(QOM.RowNe.class, x -> ((QOM.RowNe<?>) x).$args()),
          op(QOM.Add.class, x -> ((QOM.Add<?>) x).$args()),
          op(QOM.Sub.class, x -> ((QOM.Sub<?>) x).$args()),
          op(QOM.Mul.class, x -> ((QOM.Mul<?>) x).$args()),
          op(QOM.Div.class, x -> ((QOM.Div<?>) x).$args()),
          op(QOM.Neg.class, x -> ((QOM.Neg<?>) x).$args()),
          op(QOM.Abs.class, x -> ((QOM.Abs<?>) x).$args()),
          op(QOM.Lower.class, x -> ((QOM.Lower) x).$args()),
          op(QOM.Upper.class, x -> ((QOM.Upper) x).$args()),
          op(QOM.Trim.class, x -> ((QOM.Trim) x).$args()),
          op(QOM.CharLength.class, x -> ((QOM.CharLength) x).$args()),
          op(QOM.Coalesce.class, x -> ((QOM.Coalesce<?>) x).$args()),
          op(QOM.Nullif.class, x -> ((QOM.Nullif<?>) x).$args()),
          op(QOM.Greatest.class, x -> ((QOM.Greatest<?>) x).$args()),
          op(QOM.Least.class, x -> ((QOM.Least<?>) x).$args()),
          op(QOM.CaseSearched.class, x -> ((QOM.CaseSearched<?>) x).$args()),
          op(QOM.CaseSimple.class, x -> ((QOM.CaseSimple<?, ?>) x).$args()),
          op(QOM.Excluded.class, x -> ((QOM.Excluded<?>) x).$args()),
          op(QOM.Like.class, x -> List.of(((QOM.Like) x).$value(), ((QOM.Like) x).$pattern())),
          op(
              QOM.NotLike.class,
              x -> List.of(((QOM.NotLike) x).$value(), ((QOM.NotLike) x).$pattern())),
          op(
              QOM.LikeIgnoreCase.class,
              x -> List.of(((QOM.LikeIgnoreCase) x).$value(), ((QOM.LikeIgnoreCase) x).$pattern())),
          op(
              QOM.NotLikeIgnoreCase.class,
              x ->
                  List.of(
                      ((QOM.NotLikeIgnoreCase) x).$value(),
                      ((QOM.NotLikeIgnoreCase) x).$pattern())),
          op(QOM.Concat.class, x -> ((QOM.Concat) x).$arg1()),
          op(QOM.Array.class, x -> ((QOM.Array<?>) x).$elements()),
          op(QOM.In.class, x -> ((QOM.In<?>) x).$args()),
          op(QOM.NotIn.class, x -> ((QOM.NotIn<?>) x).$args()),
          op(QOM.Exists.class, x -> List.of(((QOM.Exists) x).$query())),
          op(QOM.ScalarSubquery.class, x -> ((QOM.ScalarSubquery<?>) x).$args()),
          op(QOM.QuantifiedSelect.class, x -> List.of(((QOM.QuantifiedSelect<?>) x).$query())),
          op(QOM.CurrentTimestamp.class, x -> List.of()),
          op(QOM.CurrentDate.class, x -> List.of()),
          op(
              QOM.Tuple2.class,
              x -> List.of(((QOM.Tuple2<?, ?>) x).$1(), ((QOM.Tuple2<?, ?>) x).$2())),
          op(Row.class, x -> ((Row) x).$fields()));

  /**
   * Literals jOOQ renders back exactly as PostgreSQL read them. Others are re-rendered from a Java
   * value and may change type: {@code 1e3} (numeric) comes back as double precision, an interval or
   * timestamp literal as jOOQ's own spelling.
   */
  private static final Set<Class<?>> EXACT_LITERALS =
      Set.of(
          String.class,
          Integer.class,
          Long.class,
          Short.class,
          Byte.class,
          BigInteger.class,
          BigDecimal.class,
          Boolean.class);

  /**
   * Deterministic PostgreSQL built-ins without side effects that jOOQ has no model for and renders
   * by name, as written ({@code character_length} is what Hibernate emits for JPQL {@code length}).
   */
  private static final Set<String> BUILT_IN_BY_NAME = Set.of("character_length");

  private final FaithfulRendering rendering;
  private int casts;

  /**
   * A checker for the parts of one statement; counts the casts it accepted.
   *
   * @param rendering renders a subquery to compare it with its rebuilt form
   */
  SafeExpressions(FaithfulRendering rendering) {
    this.rendering = rendering;
  }

  /** How many casts the checked parts contain: jOOQ must render no others. */
  int casts() {
    return casts;
  }

  private static Operator op(Class<?> type, Function<Object, List<?>> arguments) {
    return new Operator(type, arguments);
  }

  /**
   * Returns why {@code part} cannot be kept, or null if it can.
   *
   * @param part an expression, condition, row or list of them; null is fine
   */
  String unsafe(Object part) {
    if (part == null
        || part instanceof Boolean
        || part instanceof Character
        || part instanceof Number
        || part instanceof Enum<?>) {
      return null;
    }
    if (part instanceof Collection<?> list) {
      for (Object element : list) {
        String reason = unsafe(element);
        if (reason != null) {
          return reason;
        }
      }
      return null;
    }
    if (part instanceof Map<?, ?> map) {
      String reason = unsafe(map.keySet());
      return reason != null ? reason : unsafe(map.values());
    }
    if (part instanceof Param<?> param) {
      if (param.getParamName() != null) {
        return "the named parameter " + param.getParamName() + " (use ? placeholders)";
      }
      Object value = param.getValue();
      if (param.isInline() && value != null && !EXACT_LITERALS.contains(value.getClass())) {
        return "a literal that jOOQ reads as "
            + value.getClass().getSimpleName()
            + " and may render with another type or spelling; pass it as a ? parameter";
      }
      return null;
    }
    if (part instanceof TableField<?, ?> column) {
      return column.getName().startsWith("$")
          ? "the positional parameter " + column.getName() + " (use ? placeholders)"
          : null;
    }
    if (part instanceof Asterisk
        || part instanceof QualifiedAsterisk
        || part instanceof QOM.True
        || part instanceof QOM.False
        || part instanceof QOM.Null) {
      return null;
    }
    if (part instanceof QOM.Cast<?> cast) {
      casts++;
      String reason = unsafeCastType(cast.$dataType());
      return reason != null ? reason : unsafe(cast.$field());
    }
    if (part instanceof org.jooq.Select<?> select) {
      return unsafeSubquery(select);
    }
    if (part instanceof QOM.Function<?> function
        && function.getQualifiedName().parts().length == 1
        && BUILT_IN_BY_NAME.contains(function.getName().toLowerCase(Locale.ROOT))) {
      return unsafe(function.$args());
    }
    if (part.getClass().getName().equals("org.jooq.impl.Expression")) {
      List<?> operands = rendering.temporalOperands((org.jooq.QueryPart) part);
      return operands == null
          ? "date or time arithmetic that jOOQ renders differently from how it was written"
          : unsafe(operands);
    }
    String quantified = unsafeQuantified(part);
    if (quantified != null) {
      return quantified.isEmpty() ? null : quantified;
    }
    for (Operator operator : OPERATORS) {
      if (operator.type().isInstance(part)) {
        return unsafe(operator.arguments().apply(part));
      }
    }
    return describe(part);
  }

  /**
   * A quantified comparison ({@code x = ANY(?)}, {@code x <> ALL(SELECT ...)}): null if {@code
   * part} is none, "" if it may be kept, else why not. jOOQ reads {@code ANY(e)} as an array of the
   * one element {@code e}; {@link FaithfulRendering} renders it back as {@code ANY(e)}.
   */
  private String unsafeQuantified(Object part) {
    if (!FaithfulRendering.isQuantifiedComparison(part)) {
      return null;
    }
    List<?> operands = FaithfulRendering.quantifiedArgs(part);
    Object right = operands.get(1);
    String reason;
    if (right instanceof QOM.QuantifiedArray<?> array) {
      if (!(array.$array() instanceof QOM.Array<?> elements) || elements.$elements().size() != 1) {
        return "a comparison with ANY or ALL of a list the rewriter cannot read back";
      }
      reason = unsafe(List.of(operands.get(0), elements.$elements().get(0)));
    } else if (right instanceof QOM.QuantifiedSelect<?> select) {
      reason = unsafe(List.of(operands.get(0), select.$query()));
    } else {
      return "a comparison with ANY or ALL the rewriter cannot read back";
    }
    return reason == null ? "" : reason;
  }

  /**
   * A subquery may be kept if it only reads: plain tables (no table functions, no joins), safe
   * expressions, no WITH, no locking clause, no set operation, no ORDER BY, LIMIT or OFFSET. The
   * last ones jOOQ's model does not all show, so the subquery must render exactly as the one
   * rebuilt from the parts checked here.
   */
  private String unsafeSubquery(org.jooq.Select<?> select) {
    if (select.$with() != null) {
      return "a subquery with WITH (a CTE may write)";
    }
    if (!select.$distinctOn().isEmpty()
        || !select.$window().isEmpty()
        || select.$qualify() != null
        || select.$intoTable() != null
        || !select.$orderBy().isEmpty()
        || select.$limit() != null
        || select.$offset() != null
        || select.$groupByDistinct()) {
      return "a subquery with DISTINCT ON, WINDOW, INTO, ORDER BY, LIMIT or OFFSET";
    }
    for (org.jooq.Table<?> table : select.$from()) {
      org.jooq.Table<?> named = table instanceof QOM.TableAlias<?> alias ? alias.$table() : table;
      if (!(named instanceof org.jooq.impl.TableImpl<?>)
          || named.getQualifiedName().parts().length > 3) {
        return "a subquery that reads from something other than a plain table (a join, a"
            + " function or a nested query)";
      }
    }
    String reason = unsafe(select.$select());
    reason = reason != null ? reason : unsafe(select.$where());
    reason = reason != null ? reason : unsafe(select.$groupBy());
    reason = reason != null ? reason : unsafe(select.$having());
    if (reason != null) {
      return reason;
    }
    return rendering.rendersAsRebuilt(select)
        ? null
        : "a subquery with a part the rewriter does not read (a set operation such as UNION, a"
            + " locking clause, ...)";
  }

  /**
   * Cast types jOOQ renders with the meaning PostgreSQL gave them; {@code bit(n)} comes back as
   * boolean and {@code float(n)} as float8, so those are refused. Types jOOQ does not know (enums,
   * domains, extension types) are rendered by name, as written.
   */
  private static final Set<String> EXACT_CAST_TYPES =
      Set.of(
          "smallint",
          "integer",
          "bigint",
          "numeric",
          "decimal",
          "real",
          "double",
          "varchar",
          "char",
          "clob",
          "boolean",
          "date",
          "time",
          "timestamp",
          "time with time zone",
          "timestamp with time zone",
          "interval",
          "uuid",
          "json",
          "jsonb",
          "xml",
          "blob");

  private static String unsafeCastType(DataType<?> type) {
    if (type.getSQLDataType() == null) {
      return null;
    }
    String name = type.getTypeName().toLowerCase(Locale.ROOT);
    if (name.endsWith(" array")) {
      name = name.substring(0, name.length() - " array".length());
    }
    return EXACT_CAST_TYPES.contains(name)
        ? null
        : "a cast to " + type.getTypeName() + ", which jOOQ renders as another type";
  }

  /**
   * Names what was refused in the words of SQL, never by jOOQ's rendering of it (which may differ
   * from what the application wrote, and shows parameters as null); the refusal quotes the
   * statement itself.
   */
  private static String describe(Object part) {
    if (part instanceof QOM.Function<?> function) {
      return "the function " + function.getName() + "(), which the rewriter cannot classify";
    }
    if (part instanceof QOM.Default<?>) {
      return "DEFAULT where only a value may stand";
    }
    String kind = part.getClass().getSimpleName().replaceAll("Impl$", "");
    return "an expression the rewriter cannot prove jOOQ renders with its meaning (read by jOOQ as "
        + kind
        + ")";
  }
}
