package dev.fencing.spring.internal;

import dev.fencing.jdbc.Fencing;
import dev.fencing.spring.FencingProperties;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.slf4j.LoggerFactory;

/**
 * Writes to a fenced table made outside any fencing scope, in the default mode: they carry no
 * lease, so nothing fences them. The usual cause is a {@code @Fenced} method called from another
 * method of the same bean (self-invocation bypasses the Spring proxy, and so the lease).
 * Connections taken outside a scope, once the application context is refreshed (Flyway's and the
 * application's startup writes are left alone), have the target table of every {@code INSERT},
 * {@code UPDATE}, {@code DELETE}, {@code MERGE} and {@code TRUNCATE} compared with the tables that
 * have a {@code fence_token} column. A match is logged once per table and call site, at most
 * {@value #WARNINGS_PER_MINUTE} lines a minute ({@code fencing.unscoped-writes=warn}, the default),
 * or refused before it reaches the database ({@code refuse}).
 *
 * <p>The check reads the statement's target only: a write that reaches a fenced table through a
 * cascading foreign key, a rule or a trigger of another table is not seen.
 */
public final class UnscopedWrites {

  /** At most this many warnings a minute, whatever the number of call sites. */
  static final int WARNINGS_PER_MINUTE = 10;

  /** Call sites remembered; past this many, new ones are no longer logged. */
  static final int MAX_CALL_SITES = 1000;

  private static final int MAX_CACHED_STATEMENTS = 2000;
  private static final int MAX_QUOTED = 300;

  private static final String FENCED_TABLES =
      "SELECT table_schema, table_name FROM information_schema.columns"
          + " WHERE column_name = 'fence_token'";

  private static final org.slf4j.Logger log = LoggerFactory.getLogger(UnscopedWrites.class);

  private static final Set<String> FRAMEWORK_PREFIXES =
      Set.of(
          "java.",
          "javax.",
          "jakarta.",
          "jdk.",
          "sun.",
          "com.sun.",
          "org.springframework.",
          "org.hibernate.",
          "com.zaxxer.",
          "org.postgresql.",
          "org.mariadb.",
          "org.jooq.",
          "net.bytebuddy.",
          "org.aopalliance.",
          "dev.fencing.spring.internal.",
          "dev.fencing.jdbc.");

  private final FencingProperties.UnscopedWrites mode;
  private volatile boolean armed;

  /** The fenced tables by the names a statement may use for them, each to its full name(s). */
  private volatile Map<String, String> fencedTables;

  private final Map<String, Optional<String>> targets = new ConcurrentHashMap<>();
  private final Set<String> warned = ConcurrentHashMap.newKeySet();
  private long windowStart;
  private int windowCount;
  private int suppressed;

  /**
   * Creates the check.
   *
   * @param mode what to do with a write to a fenced table outside any scope
   */
  public UnscopedWrites(FencingProperties.UnscopedWrites mode) {
    this.mode = mode;
  }

  /** From now on, connections taken outside a scope are checked. */
  public void arm() {
    armed = true;
  }

  /**
   * Returns {@code dataSource} with the check in front of it.
   *
   * @param dataSource the application's data source
   * @return the checking data source
   */
  public DataSource screen(DataSource dataSource) {
    return new Screen(dataSource);
  }

  /** A write refused for being outside any fencing scope: SQLState {@code 0A000}. */
  public static final class Refusal extends SQLFeatureNotSupportedException {
    private static final long serialVersionUID = 1L;

    Refusal(String message) {
      super(message, BootRefusals.REFUSED);
    }
  }

  private Connection checked(Connection connection) throws SQLException {
    if (fencedTables == null) {
      synchronized (this) {
        if (fencedTables == null) {
          fencedTables = readFencedTables(connection);
        }
      }
    }
    if (fencedTables.isEmpty()) {
      return connection;
    }
    return (Connection)
        Proxy.newProxyInstance(
            UnscopedWrites.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            new Checking(connection, true));
  }

  /**
   * The fenced tables by name: {@code schema.table} to itself, and {@code table} to the table of
   * that name in the connection's current schema if it is fenced, else to every fenced table of
   * that name (an unqualified name may mean any of them, for another {@code search_path}).
   */
  private static Map<String, String> readFencedTables(Connection connection) throws SQLException {
    String current = connection.getSchema();
    String currentSchema = current == null ? "" : current.toLowerCase(Locale.ROOT);
    Map<String, String> names = new TreeMap<>();
    try (Statement s = connection.createStatement();
        ResultSet rows = s.executeQuery(FENCED_TABLES)) {
      while (rows.next()) {
        String schema = rows.getString(1).toLowerCase(Locale.ROOT);
        String table = rows.getString(2).toLowerCase(Locale.ROOT);
        String full = schema + "." + table;
        names.put(full, full);
        if (schema.equals(currentSchema)) {
          names.put(table, full);
        } else if (!names.containsKey(currentSchema + "." + table)) {
          names.merge(table, full, (known, more) -> known + ", " + more);
        }
      }
    }
    if (!connection.getAutoCommit()) {
      connection.rollback();
    }
    return Map.copyOf(names);
  }

  /** Checks one SQL string sent outside a scope. */
  void check(String sql) throws SQLException {
    if (sql == null) {
      return;
    }
    if (targets.size() > MAX_CACHED_STATEMENTS) {
      targets.clear();
    }
    Optional<String> table =
        targets.computeIfAbsent(
            sql,
            s ->
                WriteTargets.of(s).stream()
                    .map(fencedTables::get)
                    .filter(t -> t != null)
                    .findFirst());
    if (table.isEmpty()) {
      return;
    }
    if (mode == FencingProperties.UnscopedWrites.REFUSE) {
      throw new Refusal(
          "fencing refused to run this write outside any fencing scope: it writes the fenced table "
              + table.get()
              + ", and a write without a lease is fenced by nothing (a stale holder's would land):"
              + " \""
              + quoted(sql)
              + "\". Nothing was sent to the database. Run it inside a @Fenced method called"
              + " through its Spring proxy (a call from another method of the same bean bypasses"
              + " the proxy, and with it the lease) or a ShedLock task; set"
              + " fencing.unscoped-writes=warn to log such writes instead of refusing them.");
    }
    warn(table.get(), sql);
  }

  private void warn(String table, String sql) {
    String site = callSite();
    String key = table + " @ " + site;
    if (warned.contains(key) || warned.size() >= MAX_CALL_SITES || !warned.add(key)) {
      return;
    }
    int dropped;
    synchronized (this) {
      long now = System.nanoTime();
      if (now - windowStart > 60_000_000_000L) {
        windowStart = now;
        windowCount = 0;
      }
      if (++windowCount > WARNINGS_PER_MINUTE) {
        suppressed++;
        warned.remove(key);
        return;
      }
      dropped = suppressed;
      suppressed = 0;
    }
    log.warn(
        "A write to the fenced table {} ran outside any fencing scope, so nothing fenced it (a stale"
            + " holder's would land): \"{}\" from {}. Is a @Fenced method called from another method"
            + " of its own bean (self-invocation bypasses the Spring proxy, and with it the lease)?"
            + " Call it through the proxy (from another bean), or set fencing.unscoped-writes=refuse"
            + " to refuse such writes, or =ignore if they are meant to be unfenced. Logged once per"
            + " table and call site.{}",
        table,
        quoted(sql),
        site,
        dropped == 0 ? "" : " (" + dropped + " more such warnings were suppressed)");
  }

  private static String callSite() {
    return StackWalker.getInstance()
        .walk(
            frames ->
                frames
                    .filter(f -> !framework(f.getClassName()))
                    .findFirst()
                    .map(f -> f.getClassName() + "." + f.getMethodName() + ":" + f.getLineNumber())
                    .orElse("(unknown)"));
  }

  private static boolean framework(String className) {
    if (className.contains("$$") || className.startsWith("jdk.proxy")) {
      return true;
    }
    for (String prefix : FRAMEWORK_PREFIXES) {
      if (className.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  private static String quoted(String sql) {
    String one = sql.strip().replaceAll("\\s+", " ");
    return one.length() > MAX_QUOTED ? one.substring(0, MAX_QUOTED) + "..." : one;
  }

  /** The application's data source, checking connections taken outside a scope. */
  final class Screen implements DataSource {
    private final DataSource delegate;

    Screen(DataSource delegate) {
      this.delegate = delegate;
    }

    private boolean checking() {
      return armed && Fencing.currentLease().isEmpty();
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection connection = delegate.getConnection();
      return checking() ? checkedOrClose(connection) : connection;
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
      Connection connection = delegate.getConnection(username, password);
      return checking() ? checkedOrClose(connection) : connection;
    }

    private Connection checkedOrClose(Connection connection) throws SQLException {
      try {
        return checked(connection);
      } catch (SQLException | RuntimeException e) {
        try {
          connection.close();
        } catch (SQLException closing) {
          e.addSuppressed(closing);
        }
        throw e;
      }
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws java.sql.SQLFeatureNotSupportedException {
      return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return iface.isInstance(delegate) ? iface.cast(delegate) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return iface.isInstance(delegate) || delegate.isWrapperFor(iface);
    }
  }

  /**
   * Checks the SQL given to a connection's {@code prepare*} or a statement's {@code execute*} and
   * {@code addBatch}; statements the connection creates are checked too.
   */
  private final class Checking implements InvocationHandler {
    private final Object target;
    private final boolean connection;

    Checking(Object target, boolean connection) {
      this.target = target;
      this.connection = connection;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("equals") && args != null && args.length == 1) {
        return proxy == args[0];
      }
      if (name.equals("hashCode") && (args == null || args.length == 0)) {
        return System.identityHashCode(proxy);
      }
      if (args != null
          && args.length > 0
          && args[0] instanceof String sql
          && (connection
              ? name.startsWith("prepare")
              : name.startsWith("execute") || name.equals("addBatch"))) {
        check(sql);
      }
      Object result;
      try {
        result = method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (connection && name.equals("createStatement") && result instanceof Statement) {
        return Proxy.newProxyInstance(
            UnscopedWrites.class.getClassLoader(),
            new Class<?>[] {Statement.class},
            new Checking(result, false));
      }
      return result;
    }
  }

  /**
   * The tables a statement writes, by its text: lower-case, {@code table} or {@code schema.table}.
   */
  static final class WriteTargets {
    private final List<String> tokens;
    private int at;

    private WriteTargets(List<String> tokens) {
      this.tokens = tokens;
    }

    static List<String> of(String sql) {
      return new WriteTargets(tokens(sql)).targets();
    }

    private List<String> targets() {
      List<String> out = new ArrayList<>();
      if (tokens.isEmpty()) {
        return out;
      }
      String first = tokens.get(0);
      if (!first.equals("with") && !isWriteVerb(first)) {
        return out;
      }
      for (at = 0; at < tokens.size(); at++) {
        switch (tokens.get(at)) {
          case "insert", "merge", "replace" -> {
            skip("ignore", "low_priority", "delayed", "high_priority");
            skip("into");
            name().ifPresent(out::add);
          }
          case "update" -> {
            if (at > 0 && (tokens.get(at - 1).equals("for") || tokens.get(at - 1).equals("do"))) {
              continue;
            }
            skip("low_priority", "ignore");
            skip("only");
            name().ifPresent(out::add);
          }
          case "delete" -> {
            skip("low_priority", "quick", "ignore");
            skip("from");
            skip("only");
            name().ifPresent(out::add);
          }
          case "truncate" -> {
            skip("table");
            do {
              skip("only");
              name().ifPresent(out::add);
            } while (next(","));
          }
          default -> {}
        }
      }
      return out;
    }

    private static boolean isWriteVerb(String token) {
      return switch (token) {
        case "insert", "update", "delete", "merge", "truncate", "replace" -> true;
        default -> false;
      };
    }

    private void skip(String... words) {
      while (at + 1 < tokens.size() && List.of(words).contains(tokens.get(at + 1))) {
        at++;
      }
    }

    private boolean next(String token) {
      if (at + 1 < tokens.size() && tokens.get(at + 1).equals(token)) {
        at++;
        return true;
      }
      return false;
    }

    private Optional<String> name() {
      if (at + 1 >= tokens.size() || !identifier(tokens.get(at + 1))) {
        return Optional.empty();
      }
      StringBuilder name = new StringBuilder(tokens.get(++at));
      while (at + 2 < tokens.size()
          && tokens.get(at + 1).equals(".")
          && identifier(tokens.get(at + 2))) {
        name.append('.').append(tokens.get(at + 2));
        at += 2;
      }
      String full = name.toString();
      long dots = full.chars().filter(c -> c == '.').count();
      if (dots > 1) { // catalog.schema.table
        full = full.substring(full.indexOf('.') + 1);
      }
      return Optional.of(full);
    }

    private static boolean identifier(String token) {
      char c = token.charAt(0);
      return Character.isLetter(c) || c == '_';
    }

    /**
     * Words (lower-case; quoted identifiers unquoted, also lower-case) and punctuation; comments,
     * string literals and numbers left out.
     */
    static List<String> tokens(String sql) {
      List<String> out = new ArrayList<>();
      int n = sql.length();
      int i = 0;
      while (i < n) {
        char c = sql.charAt(i);
        if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
          while (i < n && sql.charAt(i) != '\n') {
            i++;
          }
        } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
          int end = sql.indexOf("*/", i + 2);
          i = end < 0 ? n : end + 2;
        } else if (c == '\'') {
          i++;
          while (i < n) {
            if (sql.charAt(i) == '\'' && (i + 1 >= n || sql.charAt(i + 1) != '\'')) {
              break;
            }
            i += sql.charAt(i) == '\'' ? 2 : 1;
          }
          i++;
        } else if (c == '"' || c == '`') {
          int end = sql.indexOf(c, i + 1);
          if (end < 0) {
            end = n;
          }
          String quoted = sql.substring(i + 1, end);
          out.add(quoted.isEmpty() ? "_" : quoted.toLowerCase(Locale.ROOT));
          i = end + 1;
        } else if (Character.isLetter(c) || c == '_') {
          int start = i;
          while (i < n
              && (Character.isLetterOrDigit(sql.charAt(i))
                  || sql.charAt(i) == '_'
                  || sql.charAt(i) == '$')) {
            i++;
          }
          out.add(sql.substring(start, i).toLowerCase(Locale.ROOT));
        } else if (Character.isDigit(c)) {
          while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
            i++;
          }
        } else {
          out.add(String.valueOf(c));
          i++;
        }
      }
      return out;
    }
  }
}
