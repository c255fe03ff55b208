package dev.fencing.migrations;

import dev.fencing.migrations.internal.DriverManagerDataSource;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Command-line tool: {@code java -jar fencing-migrations.jar --url URL --tables a,b [--enforce b]
 * [--strict]}. Prints what it did. Exit codes: 0 success, 1 database or migration failure (one line
 * on stderr, no stack trace), 2 bad arguments (usage on stderr).
 */
public final class MigrateCommand {
  /** Exit code for success. */
  public static final int OK = 0;

  /** Exit code when the database is unreachable or the migration failed. */
  public static final int FAILED = 1;

  /** Exit code for bad arguments. */
  public static final int USAGE = 2;

  static final String USAGE_TEXT =
      String.join(
          "\n",
          "usage: java -jar fencing-migrations.jar --url JDBC_URL [options]",
          "",
          "Creates the fencing schema (fence table, triggers), adds fence_token BIGINT NOT NULL"
              + " DEFAULT 0",
          "and fence_resource TEXT to the given tables and optionally installs the enforcement"
              + " triggers",
          "(fencing_enforce, fencing_truncate). Idempotent.",
          "",
          "  --url URL              JDBC URL, e.g. jdbc:postgresql://127.0.0.1:5432/test"
              + " (required)",
          "  --user NAME            database user",
          "  --password SECRET      database password",
          "  --schema NAME          fence schema, a schema of its own (default fencing); use the"
              + " same name",
          "                         in fencing-jdbc: FenceOptions.defaults().withSchema(NAME)",
          "  --tables T1,T2         tables that get the fence_token column (table or"
              + " schema.table)",
          "  --enforce T1,T2        tables that also get the fencing_enforce trigger",
          "  --strict               the --enforce tables reject writes without a fencing token"
              + " and TRUNCATE",
          "                         (default: lenient; --strict without --enforce is an error)",
          "  --lock-timeout-ms N    lock_timeout per DDL attempt (default 200)",
          "  --max-attempts N       attempts per DDL statement (default 50)",
          "  --max-wait-ms N        time bound per DDL statement (default 30000)",
          "  --verbose              show Flyway's own log",
          "  --help                 print this help",
          "",
          "Exit codes: 0 done, 1 database unreachable or migration failed, 2 bad arguments.");

  private static final java.util.Set<String> VALUE_OPTIONS =
      java.util.Set.of(
          "--url",
          "--user",
          "--password",
          "--schema",
          "--tables",
          "--enforce",
          "--lock-timeout-ms",
          "--max-attempts",
          "--max-wait-ms");

  /** Held strongly so the level set on it is not lost to garbage collection. */
  private static final java.util.logging.Logger FLYWAY_LOG =
      java.util.logging.Logger.getLogger("org.flywaydb");

  private MigrateCommand() {}

  /**
   * Runs the tool and exits the JVM with its exit code.
   *
   * @param args command-line arguments
   */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs the tool without exiting the JVM.
   *
   * @param args command-line arguments
   * @param out where the report (and {@code --help}) goes
   * @param err where errors and usage on bad arguments go
   * @return the exit code: {@link #OK}, {@link #FAILED} or {@link #USAGE}
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    String url = null;
    String user = null;
    String password = null;
    List<String> tables = new ArrayList<>();
    List<String> enforce = new ArrayList<>();
    boolean strict = false;
    boolean verbose = false;
    MigrationOptions.Builder builder = MigrationOptions.builder();
    try {
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        String value = null;
        int eq = arg.indexOf('=');
        if (arg.startsWith("--") && eq > 0) {
          value = arg.substring(eq + 1);
          arg = arg.substring(0, eq);
        }
        switch (arg) {
          case "--help":
          case "-h":
            out.println(USAGE_TEXT);
            return OK;
          case "--verbose":
            if (value != null) {
              throw new IllegalArgumentException("--verbose takes no value");
            }
            verbose = true;
            continue;
          case "--strict":
            if (value != null) {
              throw new IllegalArgumentException("--strict takes no value");
            }
            strict = true;
            continue;
          default:
            break;
        }
        if (!VALUE_OPTIONS.contains(arg)) {
          throw new IllegalArgumentException("unknown option " + arg);
        }
        if (value == null) {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException("missing value for " + arg);
          }
          value = args[++i];
        }
        switch (arg) {
          case "--url" -> url = value;
          case "--user" -> user = value;
          case "--password" -> password = value;
          case "--schema" -> builder.schema(value);
          case "--tables" -> tables.addAll(splitList(arg, value));
          case "--enforce" -> enforce.addAll(splitList(arg, value));
          case "--lock-timeout-ms" ->
              builder.lockTimeout(Duration.ofMillis(parsePositive(arg, value)));
          case "--max-attempts" -> builder.maxAttempts((int) parsePositive(arg, value));
          case "--max-wait-ms" ->
              builder.maxTotalWait(Duration.ofMillis(parsePositive(arg, value)));
          default -> throw new IllegalArgumentException("unknown option " + arg);
        }
      }
      if (url == null || url.isBlank()) {
        throw new IllegalArgumentException("--url is required");
      }
      if (strict && enforce.isEmpty()) {
        throw new IllegalArgumentException(
            "--strict applies to the tables given with --enforce, and none were given"
                + " (add --enforce T1,T2, or drop --strict)");
      }
      builder.fence(tables.toArray(new String[0]));
      for (String t : enforce) {
        builder.enforce(t, strict ? EnforcementMode.STRICT : EnforcementMode.LENIENT);
      }
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      err.println(USAGE_TEXT);
      return USAGE;
    }
    MigrationOptions options;
    try {
      options = builder.build();
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      err.println(USAGE_TEXT);
      return USAGE;
    }

    FLYWAY_LOG.setLevel(verbose ? java.util.logging.Level.INFO : java.util.logging.Level.WARNING);
    DriverManagerDataSource dataSource = new DriverManagerDataSource(url, user, password);
    try (Connection c = dataSource.getConnection()) {
      c.isValid(5);
    } catch (SQLException e) {
      err.println("error: cannot connect to " + redact(url) + ": " + oneLine(e.getMessage()));
      return FAILED;
    }
    try {
      MigrationReport report = FencingMigrations.migrate(dataSource, options);
      out.println(report.summary());
      out.println(
          "configure fencing-jdbc with the same fence schema: FenceOptions.defaults().withSchema(\""
              + report.schema()
              + "\")");
      return OK;
    } catch (FencingMigrationException e) {
      err.println("error: " + oneLine(e.getMessage()));
      return FAILED;
    }
  }

  private static List<String> splitList(String option, String value) {
    List<String> items = new ArrayList<>();
    for (String item : value.split(",", -1)) {
      String trimmed = item.strip();
      if (trimmed.isEmpty()) {
        throw new IllegalArgumentException("empty table name in " + option + " '" + value + "'");
      }
      items.add(trimmed);
    }
    return items;
  }

  private static long parsePositive(String option, String value) {
    try {
      long n = Long.parseLong(value);
      if (n < 1 || n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(option + " must be a positive integer: " + value);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a positive integer: " + value, e);
    }
  }

  /** Hides a password given in the URL's query string. */
  static String redact(String url) {
    return url.replaceAll("(?i)(password=)[^&]*", "$1***");
  }

  private static String oneLine(String message) {
    if (message == null) {
      return "(no message)";
    }
    return message.replaceAll("\\s*\\R\\s*", " ").strip();
  }
}
