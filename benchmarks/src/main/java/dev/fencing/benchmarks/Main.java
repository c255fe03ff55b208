package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.internal.FenceSql;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;

/**
 * Runs the benchmark set and prints one table (see BENCHMARKS.md at the repository root).
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar                      # the full set, about 12 minutes
 * java -jar benchmarks/target/benchmarks.jar --quick              # shorter rounds, 1-minute heartbeat
 * java -jar benchmarks/target/benchmarks.jar --only lease,writes  # some of them
 * </pre>
 */
public final class Main {

  static final Set<String> ALL =
      new LinkedHashSet<>(
          List.of(
              "lease",
              "handoff",
              "writes",
              "batch",
              "jooq",
              "bulk",
              "rewrite",
              "heartbeat",
              "memory"));

  /**
   * Run only when named: {@code mariadb} and {@code mariadb-batch} need a MariaDB server (--mariadb
   * URL), and so does {@code registration} (PostgreSQL and MariaDB).
   */
  static final Set<String> KNOWN =
      new LinkedHashSet<>(List.of("registration", "mariadb", "mariadb-batch"));

  static {
    KNOWN.addAll(ALL);
  }

  /** The MariaDB server of {@code --only mariadb}. */
  static String mariaDbUrl =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  /** The command line, parsed. */
  record Options(
      String jdbcUrl,
      String redisUrl,
      Harness.Timing timing,
      Set<String> only,
      int heartbeatLeases,
      Duration heartbeatDuration,
      Duration heartbeatLeaseTime,
      Duration idleWindow,
      int memoryLeases,
      Path out) {}

  private Main() {}

  /**
   * Runs the benchmarks.
   *
   * @param args options, see {@code --help}
   */
  public static void main(String[] args) throws Exception {
    System.setProperty("org.jooq.no-logo", "true");
    System.setProperty("org.jooq.no-tips", "true");
    Options options;
    try {
      options = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.err.println(usage());
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.println(usage());
      return;
    }
    String report = run(options);
    if (options.out() != null) {
      Files.writeString(options.out(), report);
      System.out.println("written to " + options.out());
    }
  }

  static String usage() {
    return String.join(
        "\n",
        "usage: java -jar benchmarks/target/benchmarks.jar [options]",
        "  --quick                  1 s warm-up, 7 rounds of 0.4 s, 60 s heartbeat (about 4 minutes)",
        "  --smoke                  a few seconds in all: checks that everything runs, numbers mean nothing",
        "  --only a,b               any of " + String.join(",", KNOWN),
        "  --mariadb URL            default jdbc:mariadb://127.0.0.1:3306/test?user=root",
        "  --warmup-ms N            warm-up per variant (default 2000)",
        "  --rounds N               measured rounds per variant (default 15)",
        "  --round-ms N             length of one round (default 600)",
        "  --heartbeat-seconds N    how long the leases are held (default 300)",
        "  --heartbeat-leases N     how many leases (default 10000)",
        "  --lease-seconds N        lease time of the heartbeat leases (default 30; renew every third)",
        "  --memory-leases N        leases held for the memory measurement (default 10000)",
        "  --jdbc URL               default jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
        "  --redis URL              default redis://127.0.0.1:6379",
        "  --out FILE               also write the report (markdown) to FILE");
  }

  static Options parse(String[] args) {
    String jdbc =
        System.getProperty(
            "fencing.test.jdbc", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    String redis = System.getProperty("fencing.test.redis", "redis://127.0.0.1:6379");
    long warmup = 2_000;
    int rounds = 15;
    long roundMs = 600;
    Set<String> only = new LinkedHashSet<>(ALL);
    int hbLeases = 10_000;
    long hbSeconds = 300;
    double leaseSeconds = 30;
    long idleMs = 10_000;
    int memLeases = 10_000;
    Path out = null;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--help", "-h", "-help" -> {
          return null;
        }
        case "--quick" -> {
          warmup = 1_000;
          rounds = 7;
          roundMs = 400;
          hbSeconds = 60;
          idleMs = 5_000;
        }
        case "--smoke" -> {
          warmup = 50;
          rounds = 1;
          roundMs = 100;
          hbLeases = 100;
          hbSeconds = 2;
          leaseSeconds = 1;
          idleMs = 100;
          memLeases = 200;
        }
        case "--only" -> {
          only = new LinkedHashSet<>(Arrays.asList(value(args, ++i, arg).split(",")));
          for (String name : only) {
            if (!KNOWN.contains(name)) {
              throw new IllegalArgumentException("unknown benchmark \"" + name + "\"");
            }
          }
        }
        case "--warmup-ms" -> warmup = Long.parseLong(value(args, ++i, arg));
        case "--rounds" -> rounds = Integer.parseInt(value(args, ++i, arg));
        case "--round-ms" -> roundMs = Long.parseLong(value(args, ++i, arg));
        case "--heartbeat-seconds" -> hbSeconds = Long.parseLong(value(args, ++i, arg));
        case "--heartbeat-leases" -> hbLeases = Integer.parseInt(value(args, ++i, arg));
        case "--lease-seconds" -> leaseSeconds = Double.parseDouble(value(args, ++i, arg));
        case "--memory-leases" -> memLeases = Integer.parseInt(value(args, ++i, arg));
        case "--jdbc" -> jdbc = value(args, ++i, arg);
        case "--redis" -> redis = value(args, ++i, arg);
        case "--mariadb" -> mariaDbUrl = value(args, ++i, arg);
        case "--out" -> out = Path.of(value(args, ++i, arg));
        default -> throw new IllegalArgumentException("unknown option \"" + arg + "\"");
      }
    }
    if (rounds < 1 || roundMs < 1 || warmup < 0) {
      throw new IllegalArgumentException("rounds and round-ms must be positive");
    }
    return new Options(
        jdbc,
        redis,
        new Harness.Timing(warmup, rounds, roundMs),
        only,
        hbLeases,
        Duration.ofSeconds(hbSeconds),
        Duration.ofMillis((long) (leaseSeconds * 1000)),
        Duration.ofMillis(idleMs),
        memLeases,
        out);
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  /** Runs what {@code options} selects and returns the report; also prints it. */
  static String run(Options options) throws Exception {
    Instant started = Instant.now();
    Report report = new Report();
    try (Env env = new Env(options.jdbcUrl(), options.redisUrl(), 8)) {
      report.machine(machine(env));
      System.out.println(report.machineText());
      Harness.Timing timing = options.timing();
      Set<String> only = options.only();
      if (only.contains("lease")) {
        for (int threads : new int[] {1, 8}) {
          progress("lease cycle, " + threads + " thread(s)");
          report.group(LeaseCycleBench.run(env, threads, timing), LeaseCycleBench.FLOOR);
        }
      }
      if (only.contains("handoff")) {
        progress("contended hand-off");
        report.handoff(HandoffBench.run(env, timing));
      }
      if (only.contains("registration")) {
        progress("registration, PostgreSQL");
        report.group(
            RegistrationBench.run(
                "PostgreSQL",
                env.redisson,
                env.prefix,
                env.pool,
                env.db.fence(),
                new FenceSql(env.fenceSchema).register(),
                1,
                timing),
            RegistrationBench.FLOOR);
      }
      if (only.contains("writes")
          || only.contains("batch")
          || only.contains("jooq")
          || only.contains("rewrite")
          || only.contains("bulk")) {
        LeaseOptions leaseOptions = LeaseOptions.defaults().withKeyPrefix(env.prefix + "db:");
        try (RedisLeaseManager redisLeases = RedisLeaseManager.create(env.redisson, leaseOptions);
            Lease lease =
                new FencedLeaseManager(redisLeases, env.db.fence())
                    .acquire(
                        "bench-writes",
                        LeaseRequest.forLeaseTime(Duration.ofSeconds(60))
                            .withMaxWait(Duration.ofSeconds(10)))) {
          JdbcBench jdbc = new JdbcBench(env, lease);
          if (only.contains("writes")) {
            for (int threads : new int[] {1, 4}) {
              for (boolean explicit : new boolean[] {false, true}) {
                progress(
                    "one-row updates, "
                        + threads
                        + " thread(s), "
                        + (explicit ? "explicit transaction" : "auto-commit"));
                report.group(jdbc.writes(threads, explicit, timing), JdbcBench.PLAIN);
              }
            }
          }
          if (only.contains("batch")) {
            progress("billing batch");
            report.group(jdbc.batch(1, timing), JdbcBench.BATCH_PLAIN);
          }
          if (only.contains("jooq")) {
            progress("jOOQ");
            report.group(jdbc.jooq(1, timing), JdbcBench.JDBC_PLAIN);
          }
          if (only.contains("bulk")) {
            progress("trigger mode, 100,000-row bulk UPDATE");
            report.group(new BulkBench(env, lease).run(timing), BulkBench.PLAIN);
          }
          if (only.contains("rewrite")) {
            progress("plain SQL rewrite");
            report.group(jdbc.rewrite(1, timing), JdbcBench.REWRITE_PLAIN);
          }
        }
      }
      if (only.contains("mariadb")
          || only.contains("mariadb-batch")
          || only.contains("registration")) {
        try (MariaDbBench mariaDb = new MariaDbBench(mariaDbUrl, options.redisUrl())) {
          if (only.contains("registration")) {
            progress("registration, MariaDB");
            report.group(mariaDb.registration(timing), RegistrationBench.FLOOR);
          }
          if (only.contains("mariadb")) {
            for (boolean explicit : new boolean[] {false, true}) {
              progress(
                  "MariaDB one-row updates, "
                      + (explicit ? "explicit transaction" : "auto-commit"));
              report.group(mariaDb.writes(1, explicit, timing), MariaDbBench.PLAIN);
            }
          }
          if (only.contains("mariadb") || only.contains("mariadb-batch")) {
            progress("MariaDB billing batch");
            report.group(mariaDb.batch(timing), MariaDbBench.BATCH_PLAIN);
          }
        }
      }
      if (only.contains("memory")) {
        progress("memory per held lease, " + options.memoryLeases() + " leases");
        report.memory(MemoryBench.run(env, options.memoryLeases()));
      }
      if (only.contains("heartbeat")) {
        progress(
            "heartbeat: "
                + options.heartbeatLeases()
                + " leases held for "
                + options.heartbeatDuration().toSeconds()
                + " s");
        report.heartbeat(
            HeartbeatBench.run(
                env,
                options.heartbeatLeases(),
                options.heartbeatLeaseTime(),
                options.heartbeatDuration(),
                options.idleWindow()));
      }
    }
    String text =
        report.render(
            String.format(
                Locale.ROOT,
                "warm-up %d ms, %d rounds of %d ms per variant; took %d s",
                options.timing().warmupMillis(),
                options.timing().rounds(),
                options.timing().roundMillis(),
                Duration.between(started, Instant.now()).toSeconds()));
    System.out.println();
    System.out.println(text);
    return text;
  }

  private static void progress(String what) {
    System.out.println("[" + Instant.now() + "] " + what);
  }

  private static List<String> machine(Env env) throws SQLException, IOException {
    List<String> lines = new ArrayList<>();
    lines.add("cores: " + Runtime.getRuntime().availableProcessors());
    long memory =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getTotalMemorySize();
    lines.add(String.format(Locale.ROOT, "memory: %.1f GiB", memory / (1024.0 * 1024 * 1024)));
    Path cpuinfo = Path.of("/proc/cpuinfo");
    if (Files.isReadable(cpuinfo)) {
      Files.readAllLines(cpuinfo).stream()
          .filter(l -> l.startsWith("model name"))
          .findFirst()
          .ifPresent(l -> lines.add("cpu: " + l.substring(l.indexOf(':') + 1).trim()));
    }
    lines.add(
        "java: "
            + System.getProperty("java.vm.name")
            + " "
            + System.getProperty("java.runtime.version"));
    lines.add("max heap: " + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB");
    try (Connection c = DriverManager.getConnection(env.jdbcUrl);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW server_version")) {
      rs.next();
      lines.add("PostgreSQL: " + rs.getString(1));
    }
    lines.add(
        "Redis: "
            + env.redisson
                .getRedisNodes(RedisNodes.SINGLE)
                .getInstance()
                .info(RedisNode.InfoSection.SERVER)
                .get("redis_version"));
    return lines;
  }
}
