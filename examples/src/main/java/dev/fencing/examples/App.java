package dev.fencing.examples;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import java.io.PrintStream;
import java.time.Duration;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.redisson.api.RedissonClient;

/**
 * Command line: {@code demo} replays the incident, {@code run} does one billing run.
 *
 * <p>Exit status: 0 done; 1 a server is unreachable or a run failed; 2 bad arguments; 3 the fenced
 * mode charged someone twice.
 */
public final class App {

  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int USAGE = 2;
  public static final int FENCED_DOUBLE_CHARGE = 3;

  static final String USAGE_TEXT =
      """
      usage: java -jar fencing-examples.jar <command> [options]

      commands:
        demo    replay the incident: the billing job under each locking strategy, then count
                double charges in the database (modes: 1 no lock, 2 naive lock,
                3 token + heartbeat, 4 fenced)
        run     one billing run for one period

      options:
        --jdbc-url URL       PostgreSQL (jdbc:postgresql:...) or MariaDB (jdbc:mariadb:...) JDBC
                             URL (default: $FENCING_JDBC_URL, else an embedded PostgreSQL is
                             started on a free port and stopped at exit)
        --redis-url URL      Redis URL, redis://host:port (default: $FENCING_REDIS_URL, else an
                             embedded Redis: redis-server from PATH, or the bundled one)
        --schema NAME        schema for the billing tables (default: fencing_demo; on MariaDB
                             a database); their fence is in NAME_fence; demo drops and
                             recreates both
        --customers N        customers to create (default: 3000; run: only into an empty table)
        --dao jdbc|jooq      data access code the job uses (default: jdbc)
        --modes LIST         demo only: modes to replay, e.g. 1,2 (default: 1,2,3,4)
        --ttl-ms N           lock or lease TTL in ms (default: 2000)
        --pricing-us N       simulated time to price one invoice, in microseconds
                             (default: demo 1000, run 0)
        --period YYYY-MM     run only: billing period (default: this month)
        --lock KIND          run only: none, naive (SET NX PX, DEL), lease (token +
                             heartbeat) or fenced (lease + fenced writes) (default: none)
        --fence HOW          how fenced writes are fenced: trigger (the enforcement trigger,
                             the DAO unchanged; PostgreSQL only, MariaDB refuses it) or
                             guarded (guarded statements) (default: trigger on PostgreSQL,
                             guarded on MariaDB)
        -h, --help           this text

      environment:
        FENCING_JDBC_URL     PostgreSQL or MariaDB JDBC URL, as --jdbc-url
        FENCING_REDIS_URL    Redis URL, as --redis-url

      exit status: 0 ok, 1 server unreachable or run failed, 2 bad arguments,
                   3 the fenced mode charged a customer twice
      """;

  private App() {}

  public static void main(String[] args) {
    System.exit(execute(args, System.getenv(), System.out, System.err));
  }

  /** Runs the command line; returns the exit status instead of exiting. */
  public static int execute(
      String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    System.setProperty("org.jooq.no-logo", "true");
    System.setProperty("org.jooq.no-tips", "true");
    Options options;
    try {
      options = Options.parse(args, env);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      err.print(USAGE_TEXT);
      return USAGE;
    }
    if (options.help) {
      out.print(USAGE_TEXT);
      return OK;
    }
    try {
      return options.command.equals("demo") ? demo(options, out) : run(options, out);
    } catch (ServerException e) {
      err.println("error: " + e.getMessage());
      return FAILED;
    } catch (Exception e) {
      err.println("error: " + ServerException.firstLine(e));
      return FAILED;
    }
  }

  private static Consumer<String> timestamped(PrintStream out) {
    long origin = System.nanoTime();
    return line -> {
      synchronized (out) {
        out.printf(Locale.ROOT, "%6.2fs  %s%n", (System.nanoTime() - origin) / 1e9, line);
        out.flush();
      }
    };
  }

  private static BillingDao dao(Options o, BillingDatabase database) {
    return o.dao.equals("jooq")
        ? new JooqBillingDao(database, o.schema)
        : new JdbcBillingDao(database, o.schema);
  }

  private static FenceWrites fenceWrites(Options o, BillingDatabase database) {
    return o.fence == null ? FenceWrites.defaultFor(database) : FenceWrites.valueOf(o.fence);
  }

  private static int demo(Options o, PrintStream out) throws Exception {
    Consumer<String> log = timestamped(out);
    IncidentReplay.Settings settings =
        new IncidentReplay.Settings(
            o.customers,
            Duration.ofMillis(o.ttlMillis),
            o.pricingMicros < 0 ? 1000 : o.pricingMicros,
            200,
            "2026-01");
    try (Servers servers =
            Servers.start(o.jdbcUrl, o.redisUrl, EmbeddedRedisServer.Source.PATH_OR_BUNDLED, log);
        HikariDataSource pool = servers.newPool("fencing-demo", 16)) {
      RedissonClient redisson = servers.newRedisson();
      try {
        BillingSchema schema = new BillingSchema(pool, o.schema);
        BillingDatabase database = schema.database();
        schema.drop();
        IncidentReplay replay =
            new IncidentReplay(
                pool,
                redisson,
                schema,
                dao(o, database),
                "fencing-demo:",
                settings,
                fenceWrites(o, database),
                log);
        replay.prepare();
        log.accept(
            String.format(
                Locale.ROOT,
                "%d customers in %s %s %s; lock TTL %d ms (the incident: 30 s); %s DAO",
                o.customers,
                database.label(),
                database.hasEnforcementTrigger() ? "schema" : "database",
                o.schema,
                o.ttlMillis,
                o.dao));
        List<IncidentReplay.Row> rows = new ArrayList<>();
        for (ReplayMode mode : o.modes) {
          rows.add(replay.run(mode));
        }
        out.println();
        out.println(IncidentReplay.header());
        for (IncidentReplay.Row row : rows) {
          out.println(IncidentReplay.format(row));
        }
        out.flush();
        boolean fencedDoubleCharged =
            rows.stream()
                .anyMatch(
                    r -> r.mode() == ReplayMode.FENCED && r.stats().customersChargedTwice() > 0);
        return fencedDoubleCharged ? FENCED_DOUBLE_CHARGE : OK;
      } finally {
        redisson.shutdown();
      }
    }
  }

  private static int run(Options o, PrintStream out) throws Exception {
    Consumer<String> log = timestamped(out);
    boolean withRedis = !o.lock.equals("none");
    try (Servers servers =
            Servers.start(
                o.jdbcUrl, o.redisUrl, withRedis, EmbeddedRedisServer.Source.PATH_OR_BUNDLED, log);
        HikariDataSource pool = servers.newPool("fencing-run", 4)) {
      BillingSchema schema = new BillingSchema(pool, o.schema);
      BillingDatabase database = schema.database();
      schema.migrate();
      if (BillingStats.query(pool, o.schema, o.period).activeCustomers() == 0) {
        schema.seedCustomers(o.customers);
        log.accept(o.customers + " customers created in schema " + o.schema);
      }
      RedissonClient redisson = withRedis ? servers.newRedisson() : null;
      try {
        Duration ttl = Duration.ofMillis(o.ttlMillis);
        LeaseOptions leaseOptions = LeaseOptions.defaults().withKeyPrefix("fencing-run:");
        LeaseRequest leaseRequest = LeaseRequest.forLeaseTime(ttl);
        FenceWrites fenceWrites = fenceWrites(o, database);
        FenceOptions fenceOptions = fenceWrites.options(schema.fenceSchema());
        FencedDataSource fenced = FencedDataSource.wrap(pool, fenceOptions);
        LockStrategy lock =
            switch (o.lock) {
              case "naive" ->
                  new NaiveRedisLockStrategy(redisson, "fencing-run:{billing}:lock", ttl);
              case "lease" ->
                  LeaseLockStrategy.tokenAndHeartbeat(
                      redisson, leaseOptions, leaseRequest, LeaseLockStrategy.RESOURCE);
              case "fenced" ->
                  LeaseLockStrategy.fenced(
                      redisson, leaseOptions, leaseRequest, LeaseLockStrategy.RESOURCE, fenced);
              default -> new NoLockStrategy();
            };
        BillingDao dao =
            o.lock.equals("fenced")
                ? fenceWrites.dao(dao(o, database), fenceOptions)
                : dao(o, database);
        if (o.lock.equals("fenced")) {
          log.accept("writes fenced by " + fenceWrites.description());
        }
        RunResult result =
            new BillingJob(fenced, dao, lock)
                .calculator(InvoiceCalculator.withLatency(Math.max(0, o.pricingMicros)))
                .staleWrites(new RejectedWrites(pool, database, o.schema, o.period))
                .log(log)
                .run("run-" + UUID.randomUUID().toString().substring(0, 8), o.period);
        BillingStats stats = BillingStats.query(pool, o.schema, o.period);
        log.accept(
            String.format(
                Locale.ROOT,
                "database, period %s: %d active customers, %d charges, %d charged twice,"
                    + " %d not charged, %d stale writes rejected",
                o.period,
                stats.activeCustomers(),
                stats.charges(),
                stats.customersChargedTwice(),
                stats.activeNotCharged(),
                stats.staleWritesRejected()));
        return result.acquired() ? OK : FAILED;
      } finally {
        if (redisson != null) {
          redisson.shutdown();
        }
      }
    }
  }

  /** Parsed command line. */
  static final class Options {
    private static final java.util.Set<String> KNOWN =
        java.util.Set.of(
            "--jdbc-url",
            "--redis-url",
            "--schema",
            "--customers",
            "--dao",
            "--modes",
            "--ttl-ms",
            "--pricing-us",
            "--period",
            "--lock",
            "--fence");
    String command;
    boolean help;
    String jdbcUrl;
    String redisUrl;
    String schema = "fencing_demo";
    int customers = 3000;
    String dao = "jdbc";
    List<ReplayMode> modes = List.of(ReplayMode.values());
    long ttlMillis = 2000;
    long pricingMicros = -1;
    String period = YearMonth.now().toString();
    String lock = "none";
    String fence;

    static Options parse(String[] args, Map<String, String> env) {
      Options o = new Options();
      o.jdbcUrl = blankToNull(env.get("FENCING_JDBC_URL"));
      o.redisUrl = blankToNull(env.get("FENCING_REDIS_URL"));
      Map<String, String> values = new LinkedHashMap<>();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (a.equals("-h") || a.equals("--help")) {
          o.help = true;
          return o;
        }
        if (a.startsWith("--")) {
          String name = a;
          String value;
          int eq = a.indexOf('=');
          if (!KNOWN.contains(eq > 0 ? a.substring(0, eq) : a)) {
            throw new IllegalArgumentException("unknown option: " + a);
          }
          if (eq > 0) {
            name = a.substring(0, eq);
            value = a.substring(eq + 1);
          } else if (i + 1 < args.length) {
            value = args[++i];
          } else {
            throw new IllegalArgumentException(a + " needs a value");
          }
          values.put(name, value);
        } else if (o.command == null) {
          if (!a.equals("demo") && !a.equals("run")) {
            throw new IllegalArgumentException("unknown command: " + a);
          }
          o.command = a;
        } else {
          throw new IllegalArgumentException("unexpected argument: " + a);
        }
      }
      if (o.command == null) {
        throw new IllegalArgumentException("missing command (demo or run)");
      }
      for (Map.Entry<String, String> e : values.entrySet()) {
        String v = e.getValue();
        switch (e.getKey()) {
          case "--jdbc-url" -> {
            try {
              BillingDatabase.ofUrl(v);
            } catch (IllegalArgumentException bad) {
              throw new IllegalArgumentException("--jdbc-url: " + bad.getMessage());
            }
            o.jdbcUrl = v;
          }
          case "--redis-url" -> o.redisUrl = requireStart(e.getKey(), v, "redis");
          case "--schema" -> {
            if (!v.matches("[a-z_][a-z0-9_]*") || v.length() > BillingSchema.MAX_SCHEMA_LENGTH) {
              throw new IllegalArgumentException(
                  "--schema: lower case letters, digits and _, at most "
                      + BillingSchema.MAX_SCHEMA_LENGTH
                      + " characters");
            }
            o.schema = v;
          }
          case "--customers" -> o.customers = (int) number(e.getKey(), v, 1, 10_000_000);
          case "--dao" -> o.dao = oneOf(e.getKey(), v, "jdbc", "jooq");
          case "--modes" -> o.modes = modes(v);
          case "--ttl-ms" -> o.ttlMillis = number(e.getKey(), v, 50, 3_600_000);
          case "--pricing-us" -> o.pricingMicros = number(e.getKey(), v, 0, 10_000_000);
          case "--period" -> {
            if (!v.matches("\\d{4}-\\d{2}")) {
              throw new IllegalArgumentException("--period: YYYY-MM, got " + v);
            }
            o.period = v;
          }
          case "--lock" -> o.lock = oneOf(e.getKey(), v, "none", "naive", "lease", "fenced");
          case "--fence" ->
              o.fence = oneOf(e.getKey(), v, "trigger", "guarded").toUpperCase(Locale.ROOT);
          default -> throw new IllegalArgumentException("unknown option: " + e.getKey());
        }
        if (o.command.equals("run") && e.getKey().equals("--modes")) {
          throw new IllegalArgumentException("--modes is for demo");
        }
        if (o.command.equals("demo")
            && (e.getKey().equals("--lock") || e.getKey().equals("--period"))) {
          throw new IllegalArgumentException(e.getKey() + " is for run");
        }
      }
      return o;
    }

    private static String blankToNull(String s) {
      return s == null || s.isBlank() ? null : s.trim();
    }

    private static String requireStart(String name, String v, String prefix) {
      if (!v.startsWith(prefix)) {
        throw new IllegalArgumentException(name + ": expected " + prefix + "..., got " + v);
      }
      return v;
    }

    private static long number(String name, String v, long min, long max) {
      long n;
      try {
        n = Long.parseLong(v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + ": not a number: " + v);
      }
      if (n < min || n > max) {
        throw new IllegalArgumentException(name + ": must be between " + min + " and " + max);
      }
      return n;
    }

    private static String oneOf(String name, String v, String... allowed) {
      for (String a : allowed) {
        if (a.equals(v)) {
          return v;
        }
      }
      throw new IllegalArgumentException(name + ": one of " + String.join(", ", allowed));
    }

    private static List<ReplayMode> modes(String v) {
      List<ReplayMode> modes = new ArrayList<>();
      for (String part : v.split(",")) {
        int n;
        try {
          n = Integer.parseInt(part.trim());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("--modes: numbers 1-4, e.g. 1,2; got " + v);
        }
        ReplayMode mode =
            ReplayMode.byNumber(n)
                .orElseThrow(() -> new IllegalArgumentException("--modes: no mode " + n));
        if (!modes.contains(mode)) {
          modes.add(mode);
        }
      }
      return modes;
    }
  }
}
