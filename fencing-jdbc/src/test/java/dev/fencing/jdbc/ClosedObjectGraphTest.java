package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Omission made impossible, by reflection over every public method of {@link Connection}, {@link
 * Statement}, {@link PreparedStatement}, {@link CallableStatement}, {@link ResultSet} and {@link
 * DatabaseMetaData}, on the objects a fenced connection really hands out:
 *
 * <ul>
 *   <li>every method is implemented by the wrapper (none falls through to an interface default);
 *   <li>every method that returns one of these types is declared to return a fenced wrapper, so it
 *       cannot hand back the driver's object;
 *   <li>every method that takes a string is called with a stale holder's plain write as that string
 *       (and whatever it returns or batches is executed): the write never lands, so any method that
 *       can execute SQL goes through the plain SQL policy. The control runs the same calls on the
 *       pool's own connection and sees the writes land.
 * </ul>
 */
class ClosedObjectGraphTest {

  private static final Set<Class<?>> GRAPH =
      Set.of(
          Connection.class,
          Statement.class,
          PreparedStatement.class,
          CallableStatement.class,
          ResultSet.class,
          DatabaseMetaData.class);

  private static FencingFixture fx;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
    fx.insertAccount(1, "nobody", 0);
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  /** An object obtained from a connection, and the interface it is checked against. */
  private record Obtained(Class<?> type, Object object) {}

  @FunctionalInterface
  private interface Obtain {
    Object from(Connection c) throws Exception;
  }

  private static final List<Obtain> OBJECTS =
      List.of(
          c -> c,
          Connection::createStatement,
          c -> c.prepareStatement("SELECT 1"),
          c -> c.prepareStatement("UPDATE " + fx.table("accounts") + " SET owner = ? WHERE id = 1"),
          c -> c.prepareCall("SELECT 1"),
          c -> c.prepareCall("UPDATE " + fx.table("accounts") + " SET owner = 'x' WHERE id = 1"),
          c -> c.createStatement().executeQuery("SELECT 1 AS id"),
          Connection::getMetaData);

  private static Class<?> graphType(Object object) {
    for (Class<?> type :
        List.of(
            CallableStatement.class,
            PreparedStatement.class,
            Statement.class,
            ResultSet.class,
            DatabaseMetaData.class,
            Connection.class)) {
      if (type.isInstance(object)) {
        return type;
      }
    }
    throw new AssertionError("not a JDBC object: " + object);
  }

  @Test
  void everyMethodIsTheWrappersOwnAndEveryJdbcObjectItReturnsIsFenced() throws Exception {
    List<String> leaks = new ArrayList<>();
    for (DataSource through : List.of(fx.db, fx.triggerDb)) {
      FencingFixture.Holders holders = fx.staleAndCurrent("graph");
      Fencing.run(
          holders.current(),
          () -> {
            try (Connection c = through.getConnection()) {
              for (Obtain obtain : OBJECTS) {
                Object object = obtain.from(c);
                Class<?> type = graphType(object);
                if (!isFenced(object.getClass())) {
                  leaks.add(type.getSimpleName() + " handed out as " + object.getClass().getName());
                  continue;
                }
                for (Method m : type.getMethods()) {
                  if (Modifier.isStatic(m.getModifiers())) {
                    continue;
                  }
                  Method impl = object.getClass().getMethod(m.getName(), m.getParameterTypes());
                  if (impl.getDeclaringClass().isInterface()) {
                    leaks.add(describe(object, m) + " falls through to the interface's default");
                  } else if (GRAPH.contains(m.getReturnType()) && !isFenced(impl.getReturnType())) {
                    leaks.add(describe(object, m) + " returns " + impl.getReturnType().getName());
                  }
                }
              }
            }
          });
      holders.current().close();
    }
    assertThat(leaks).as("methods that can hand back an unfenced object").isEmpty();
  }

  @Test
  void everyMethodThatTakesAStringRoutesAStaleWriteToTheFence() throws Exception {
    FencingFixture.Holders holders = fx.staleAndCurrent("graph-strings");
    List<String> landed = callEveryStringMethod(fx.db, holders);
    holders.current().close();
    assertThat(landed).as("stale writes that landed, by the method that took them").isEmpty();
  }

  @Test
  void withoutTheWrapperTheSameCallsLand() throws Exception {
    FencingFixture.Holders holders = fx.staleAndCurrent("graph-control");
    List<String> landed = callEveryStringMethod(fx.pool, holders);
    holders.current().close();
    assertThat(landed)
        .as("the control: executions through the pool's own connection land")
        .contains(
            "Statement.executeUpdate(String)",
            "Statement.addBatch(String)",
            "Connection.prepareStatement(String)",
            "Connection.prepareCall(String)");
  }

  private static List<String> callEveryStringMethod(DataSource through, FencingFixture.Holders h)
      throws Exception {
    List<String> landed = new ArrayList<>();
    int marker = 0;
    try (Connection check = java.sql.DriverManager.getConnection(fx.url);
        PreparedStatement owner =
            check.prepareStatement("SELECT owner FROM " + fx.table("accounts") + " WHERE id = 1")) {
      for (Obtain obtain : OBJECTS) {
        Class<?> type;
        try (Connection c = fx.pool.getConnection()) {
          type = graphType(obtain.from(c));
        }
        for (Method m : type.getMethods()) {
          if (Modifier.isStatic(m.getModifiers())
              || !Arrays.asList(m.getParameterTypes()).contains(String.class)) {
            continue;
          }
          String marked = "m" + ++marker;
          String write =
              "UPDATE " + fx.table("accounts") + " SET owner = '" + marked + "' WHERE id = 1";
          Fencing.run(
              h.stale(),
              () -> {
                try (Connection c = through.getConnection()) {
                  Object target = obtain.from(c);
                  Object result = invoke(m, target, write);
                  if (result instanceof PreparedStatement prepared) {
                    invoke(PreparedStatement.class.getMethod("execute"), prepared, write);
                  }
                  if (m.getName().equals("addBatch")) {
                    invoke(Statement.class.getMethod("executeBatch"), target, write);
                  }
                }
              });
          if (ownerOf(owner).equals(marked)) {
            landed.add(type.getSimpleName() + "." + m.getName() + signature(m));
            check
                .createStatement()
                .executeUpdate(
                    "UPDATE " + fx.table("accounts") + " SET owner = 'nobody' WHERE id = 1");
          }
        }
      }
    }
    return landed;
  }

  private static String ownerOf(PreparedStatement owner) throws SQLException {
    try (ResultSet row = owner.executeQuery()) {
      row.next();
      return row.getString(1);
    }
  }

  /** Calls {@code m} with {@code sql} for every string and valid defaults for the rest. */
  private static Object invoke(Method m, Object target, String sql) {
    Class<?>[] types = m.getParameterTypes();
    Object[] args = new Object[types.length];
    int ints = 0;
    int[] intDefaults =
        types.length == 2
            ? new int[] {Statement.NO_GENERATED_KEYS}
            : new int[] {
              ResultSet.TYPE_FORWARD_ONLY,
              ResultSet.CONCUR_READ_ONLY,
              ResultSet.CLOSE_CURSORS_AT_COMMIT
            };
    for (int i = 0; i < types.length; i++) {
      Class<?> t = types[i];
      if (t == String.class) {
        args[i] = sql;
      } else if (t == int.class) {
        args[i] = ints < intDefaults.length ? intDefaults[ints++] : 1;
      } else if (t == long.class) {
        args[i] = 1L;
      } else if (t == boolean.class) {
        args[i] = false;
      } else if (t == short.class) {
        args[i] = (short) 1;
      } else if (t == byte.class) {
        args[i] = (byte) 1;
      } else if (t == double.class) {
        args[i] = 1d;
      } else if (t == float.class) {
        args[i] = 1f;
      } else if (t == int[].class) {
        args[i] = new int[] {1};
      } else if (t == String[].class) {
        args[i] = new String[] {"id"};
      }
    }
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException | IllegalAccessException e) {
      return null;
    }
  }

  private static boolean isFenced(Class<?> type) {
    return type.getPackageName().equals("dev.fencing.jdbc.internal");
  }

  private static String describe(Object object, Method m) {
    return object.getClass().getSimpleName() + "." + m.getName() + signature(m);
  }

  private static String signature(Method m) {
    StringBuilder s = new StringBuilder("(");
    for (Class<?> p : m.getParameterTypes()) {
      s.append(s.length() > 1 ? ", " : "").append(p.getSimpleName());
    }
    return s.append(")").toString();
  }
}
