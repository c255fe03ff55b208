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
import org.jooq.QueryPart;
import org.jooq.Row;
import org.jooq.TableField;
import org.jooq.impl.QOM;

/**
 * Decides whether a parsed expression is one the plain-DML rewriter may keep: column references,
 * parameters, literals, operators and a short list of deterministic built-in functions without side
 * effects, which jOOQ renders back to the same PostgreSQL meaning. Everything else (subqueries,
 * unknown or volatile functions, sequence calls, quantified comparisons, ...) is reported, so the
 * statement is refused rather than guessed at. Left out on purpose because jOOQ renders them with a
 * different meaning: {@code ||} (rendered with a cast to varchar, which turns an array or jsonb
 * concatenation into a string one), {@code LIKE} (both sides cast to varchar, which changes it for
 * citext or char(n)) and {@code = ANY(?)} (rendered as {@code = ANY(ARRAY[?])}).
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

  private int casts;

  /** A checker for the parts of one statement; counts the casts it accepted. */
  SafeExpressions() {}

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
        return "the literal "
            + param
            + " ("
            + value.getClass().getSimpleName()
            + "), which jOOQ may render with another type; pass it as a ? parameter";
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
    for (Operator operator : OPERATORS) {
      if (operator.type().isInstance(part)) {
        return unsafe(operator.arguments().apply(part));
      }
    }
    return describe(part);
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

  private static String describe(Object part) {
    if (part instanceof QOM.Function<?> function) {
      return "the function " + function.getName() + "(), which the rewriter cannot classify";
    }
    if (part instanceof org.jooq.Select<?>) {
      return "a subquery";
    }
    String text = part instanceof QueryPart ? part.toString().replaceAll("\\s+", " ") : "";
    if (text.length() > 80) {
      text = text.substring(0, 77) + "...";
    }
    return "the expression " + text + " (" + part.getClass().getSimpleName() + ")";
  }
}
