import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Writes the {@code Delegating*} base classes of fencing-jdbc's JDBC wrappers into the generated
 * sources, from the {@code java.sql} interfaces of the JDK that builds them, so that a JDBC method
 * cannot be missed: every method of the interface is in the base class, and each is one of
 *
 * <ul>
 *   <li>forwarded to the wrapped object;
 *   <li>an execution ({@code execute*}): through {@code routed(sql, ...)} when it takes SQL, else
 *       through {@code execution(...)}, the hand-written class's decisions;
 *   <li>a result set or an object that may be one ({@code getObject}): handed out through {@code
 *       wrap} / {@code wrapObject}, the hand-written class's fenced wrappers; an {@code Array},
 *       whose result sets are fenced, through {@code FencedResultSet.fenced};
 *   <li>left abstract, for the hand-written class to decide: methods that return a connection, a
 *       statement or metadata, that prepare or take SQL outside an execution, or that write through
 *       a result set.
 * </ul>
 *
 * <p>Run by the build: {@code java DelegateGenerator.java OUTPUT_DIRECTORY}.
 */
public final class DelegateGenerator {

  private static final String PACKAGE = "dev.fencing.jdbc.internal";

  /** Return types handed out only by the hand-written class. */
  private static final Set<Class<?>> DECIDED =
      Set.of(
          Connection.class,
          Statement.class,
          PreparedStatement.class,
          CallableStatement.class,
          DatabaseMetaData.class);

  /** Methods, by name, that take SQL or write outside an execution: decided by hand. */
  private static final Set<String> DECIDED_NAMES =
      Set.of(
          "addBatch(java.lang.String)",
          "nativeSQL",
          "prepareStatement",
          "prepareCall",
          "createStatement",
          "insertRow",
          "updateRow",
          "deleteRow");

  private record Spec(
      String name,
      Class<?> type,
      Class<?> parent,
      String typeParameters,
      String extendsClause,
      String delegateType,
      String constructor,
      boolean bindingOnly) {}

  private static final String STATEMENT_CONSTRUCTOR =
      "(FencedConnection connection, S delegate, Routing routing) {\n"
          + "    super(connection, delegate, routing);\n  }";

  private static final List<Spec> SPECS =
      List.of(
          new Spec(
              "DelegatingConnection",
              Connection.class,
              null,
              "",
              "",
              "java.sql.Connection",
              null,
              false),
          new Spec(
              "DelegatingStatement",
              Statement.class,
              null,
              "<S extends java.sql.Statement>",
              "",
              "S",
              null,
              false),
          new Spec(
              "DelegatingPreparedStatement",
              PreparedStatement.class,
              Statement.class,
              "<S extends java.sql.PreparedStatement>",
              "extends FencedStatement<S> ",
              null,
              STATEMENT_CONSTRUCTOR,
              false),
          new Spec(
              "DelegatingBindingStatement",
              PreparedStatement.class,
              Statement.class,
              "",
              "extends FencedPreparedStatement<java.sql.PreparedStatement> ",
              null,
              STATEMENT_CONSTRUCTOR.replace("S delegate", "java.sql.PreparedStatement delegate"),
              true),
          new Spec(
              "DelegatingCallableStatement",
              CallableStatement.class,
              PreparedStatement.class,
              "",
              "extends FencedPreparedStatement<java.sql.CallableStatement> ",
              null,
              STATEMENT_CONSTRUCTOR.replace("S delegate", "java.sql.CallableStatement delegate"),
              false),
          new Spec(
              "DelegatingResultSet",
              ResultSet.class,
              null,
              "",
              "",
              "java.sql.ResultSet",
              null,
              false),
          new Spec(
              "DelegatingDatabaseMetaData",
              DatabaseMetaData.class,
              null,
              "",
              "",
              "java.sql.DatabaseMetaData",
              null,
              false));

  private DelegateGenerator() {}

  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0], PACKAGE.split("\\."));
    Files.createDirectories(dir);
    for (Spec spec : SPECS) {
      Files.writeString(dir.resolve(spec.name() + ".java"), generate(spec), StandardCharsets.UTF_8);
    }
  }

  /** The interface's public instance methods, one per signature, the most specific declaration. */
  private static List<Method> methods(Class<?> type, Class<?> parent) {
    Map<String, Method> bySignature = new LinkedHashMap<>();
    List<Method> all = new ArrayList<>(Arrays.asList(type.getMethods()));
    all.sort(Comparator.comparing(DelegateGenerator::signature));
    for (Method m : all) {
      if (Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      bySignature.merge(
          signature(m),
          m,
          (a, b) -> a.getDeclaringClass().isAssignableFrom(b.getDeclaringClass()) ? b : a);
    }
    if (parent != null) {
      for (Method m : parent.getMethods()) {
        bySignature.remove(signature(m));
      }
    }
    return new ArrayList<>(bySignature.values());
  }

  private static String signature(Method m) {
    StringJoiner s = new StringJoiner(",", m.getName() + "(", ")");
    for (Class<?> p : m.getParameterTypes()) {
      s.add(p.getTypeName());
    }
    return s.toString();
  }

  private static String generate(Spec spec) {
    StringBuilder out = new StringBuilder();
    boolean root = spec.parent() == null;
    List<Method> methods = methods(spec.type(), spec.parent());
    out.append("package ").append(PACKAGE).append(";\n\n");
    out.append("/**\n * Generated by {@code DelegateGenerator} from {@link ")
        .append(spec.type().getName())
        .append("}: do not edit. Every method of the\n * interface is forwarded, routed through")
        .append(" the subclass's decisions, or left abstract for it.\n")
        .append(spec.typeParameters().isEmpty() ? "" : " *\n * @param <S> the wrapped type\n")
        .append(" */\n");
    out.append("@SuppressWarnings(\"overloads\")\n");
    out.append("abstract class ")
        .append(spec.name())
        .append(spec.typeParameters())
        .append(' ')
        .append(spec.extendsClause())
        .append("implements ")
        .append(spec.type().getName())
        .append(" {\n\n");
    if (root) {
      out.append("  /** The wrapped object. */\n  protected final ")
          .append(spec.delegateType())
          .append(" delegate;\n\n  ")
          .append(spec.name())
          .append('(')
          .append(spec.delegateType())
          .append(" delegate) {\n    this.delegate = delegate;\n  }\n\n");
      hooks(out, spec);
    } else {
      out.append("  ").append(spec.name()).append(spec.constructor()).append("\n\n");
    }
    if (spec.bindingOnly()) {
      out.append(
          "  /** One parameter assignment, replayable onto another statement with the same"
              + " parameters. */\n"
              + "  @FunctionalInterface\n"
              + "  interface Binding {\n"
              + "    void apply(java.sql.PreparedStatement statement) throws java.sql.SQLException;"
              + "\n  }\n\n"
              + "  /** Applies one parameter assignment (to the wrapped statement, and wherever"
              + " else it must go). */\n"
              + "  abstract void bind(int index, Binding binding) throws java.sql.SQLException;\n\n");
    }
    for (Method m : methods) {
      if (spec.bindingOnly()) {
        if (m.getDeclaringClass() == PreparedStatement.class
            && m.getName().startsWith("set")
            && m.getParameterCount() > 0
            && m.getParameterTypes()[0] == int.class) {
          method(out, m, "bind(p0, s -> s." + m.getName() + "(" + args(m, 0) + "));");
        }
        continue;
      }
      if (m.getName().equals("unwrap") || m.getName().equals("isWrapperFor")) {
        if (root) {
          method(
              out,
              m,
              m.getName().equals("unwrap")
                  ? "return p0.isInstance(this) ? p0.cast(this) : delegate.unwrap(p0);"
                  : "return p0.isInstance(this) || delegate.isWrapperFor(p0);");
        }
        continue;
      }
      String call = "delegate." + m.getName() + "(" + args(m, 0) + ")";
      Class<?> returns = m.getReturnType();
      if (DECIDED.contains(returns)
          || DECIDED_NAMES.contains(m.getName())
          || DECIDED_NAMES.contains(signature(m))) {
        out.append(annotations(m)).append("  public abstract ").append(head(m)).append(";\n\n");
      } else if (m.getName().startsWith("execute")) {
        String routed =
            m.getParameterCount() > 0 && m.getParameterTypes()[0] == String.class
                ? "routed(p0, routedSql -> delegate."
                    + m.getName()
                    + "("
                    + ("routedSql" + (m.getParameterCount() > 1 ? ", " + args(m, 1) : ""))
                    + "))"
                : "execution(() -> " + call + ")";
        method(
            out,
            m,
            "return " + (returns == ResultSet.class ? "wrap(" + routed + ")" : routed) + ";");
      } else if (returns == ResultSet.class) {
        method(out, m, "return wrap(" + call + ");");
      } else if (returns == java.sql.Array.class) {
        method(out, m, "return FencedResultSet.fenced(" + call + ");");
      } else if (m.getName().equals("getObject")) {
        String wrapped = "wrapObject(" + call + ")";
        method(
            out,
            m,
            "return "
                + (m.getGenericReturnType() instanceof TypeVariable<?>
                    ? "p1.cast(" + wrapped + ")"
                    : wrapped)
                + ";");
      } else {
        method(out, m, (returns == void.class ? "" : "return ") + call + ";");
      }
    }
    out.append("}\n");
    return out.toString();
  }

  private static void hooks(StringBuilder out, Spec spec) {
    if (spec.type() == Statement.class) {
      out.append(
          "  /** A call of the wrapped statement with the SQL as routed. */\n"
              + "  @FunctionalInterface\n"
              + "  interface RoutedCall<T> {\n"
              + "    T call(String sql) throws java.sql.SQLException;\n  }\n\n"
              + "  /** Runs one execution without SQL of its own. */\n"
              + "  abstract <T> T execution(SqlCall<T> call) throws java.sql.SQLException;\n\n"
              + "  /** Runs one execution of plain SQL, as the plain SQL policy routes it. */\n"
              + "  abstract <T> T routed(String sql, RoutedCall<T> call) throws"
              + " java.sql.SQLException;\n\n");
    }
    if (spec.type() == Statement.class || spec.type() == DatabaseMetaData.class) {
      out.append(
          "  /** Hands out a result set of the wrapped object, fenced; null stays null. */\n"
              + "  abstract FencedResultSet wrap(java.sql.ResultSet raw) throws"
              + " java.sql.SQLException;\n\n");
    }
    if (spec.type() == Statement.class || spec.type() == ResultSet.class) {
      out.append(
          "  /** Hands out a value that may be a result set (a cursor), fenced. */\n"
              + "  abstract Object wrapObject(Object raw) throws java.sql.SQLException;\n\n");
    }
  }

  private static String annotations(Method m) {
    return (m.isAnnotationPresent(Deprecated.class) ? "  @Deprecated\n" : "") + "  @Override\n";
  }

  private static void method(StringBuilder out, Method m, String body) {
    String returns = typeName(m.getGenericReturnType());
    if (m.getReturnType() == ResultSet.class) {
      returns = "FencedResultSet";
    }
    out.append(annotations(m))
        .append("  public ")
        .append(
            head(m)
                .replaceFirst(
                    "^(<[^>]*> )?"
                        + java.util.regex.Pattern.quote(typeName(m.getGenericReturnType()))
                        + " ",
                    "$1" + java.util.regex.Matcher.quoteReplacement(returns) + " "))
        .append(" {\n    ")
        .append(body)
        .append("\n  }\n\n");
  }

  private static String head(Method m) {
    StringBuilder s = new StringBuilder();
    TypeVariable<Method>[] vars = m.getTypeParameters();
    if (vars.length > 0) {
      StringJoiner v = new StringJoiner(", ", "<", "> ");
      for (TypeVariable<Method> var : vars) {
        v.add(var.getName());
      }
      s.append(v);
    }
    s.append(typeName(m.getGenericReturnType())).append(' ').append(m.getName()).append('(');
    Type[] params = m.getGenericParameterTypes();
    for (int i = 0; i < params.length; i++) {
      s.append(i > 0 ? ", " : "").append(typeName(params[i])).append(" p").append(i);
    }
    s.append(')');
    if (m.getExceptionTypes().length > 0) {
      StringJoiner t = new StringJoiner(", ", " throws ", "");
      for (Class<?> e : m.getExceptionTypes()) {
        t.add(e.getName());
      }
      s.append(t);
    }
    return s.toString();
  }

  private static String typeName(Type type) {
    return type.getTypeName();
  }

  private static String args(Method m, int from) {
    StringJoiner s = new StringJoiner(", ");
    for (int i = from; i < m.getParameterCount(); i++) {
      s.add("p" + i);
    }
    return s.toString();
  }
}
