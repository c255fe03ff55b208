package dev.fencing.it;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One run of the suite: its own schemas, its own Redis primary and replica behind a {@link
 * TcpProxy}, several {@link Worker} JVMs, a nemesis injecting faults at random for the run's
 * duration, then the {@link Checker}. Everything it starts is stopped in {@code finally} (and by a
 * shutdown hook if the JVM is killed).
 */
final class ChaosRun {

  static final String JDBC = PostgresChaos.JDBC;

  /** Fault kinds the nemesis injects. */
  enum Fault {
    PAUSE_WORKER(8, "SIGSTOP of a worker (mostly a lease holder) for 2-4.5 lease times"),
    KILL_WORKER(2, "kill -9 of a worker (restarted)"),
    REDIS_RESTART_EMPTY(1, "Redis primary killed and restarted empty"),
    REDIS_FAILOVER(1, "replica lagging, primary killed, replica promoted (REPLICAOF NO ONE)"),
    CLIENT_PAUSE(1, "CLIENT PAUSE ALL on the primary for 1-3 lease times"),
    PG_TERMINATE(2, "pg_terminate_backend of a worker's backends"),
    PROXY_STALL(2, "Redis proxy forwards nothing for 0.5-2.5 lease times"),
    PROXY_CUT(1, "every Redis connection cut at the proxy"),
    CUT_IN_TRANSACTION(
        2,
        "a holder's Redis lock deleted while its transaction, already written to, is open; a"
            + " successor acquires and registers at once, then the holder commits"),
    PG_FAILOVER(
        1,
        "PostgreSQL primary lost (immediate stop) after its asynchronous standby stopped taking"
            + " WAL for 0.2-0.8 s; the standby promoted, a new one built meanwhile (PostgresPairChaos"
            + " only)");

    final int weight;
    final String description;

    Fault(int weight, String description) {
      this.weight = weight;
      this.description = description;
    }
  }

  /**
   * What to run. {@code mode}: guarded, trigger or off; {@code faults}: the kinds the nemesis
   * injects; {@code shapes}: the workers' transaction shapes ({@link Worker.Shape} names,
   * comma-separated; blank for all).
   */
  record Settings(
      String mode,
      long seed,
      Duration duration,
      int workers,
      int resources,
      long leaseMs,
      Set<Fault> faults,
      String shapes,
      Path dir) {

    Settings {
      faults = faults.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(faults));
    }

    /** Every fault kind that needs no standby (all but {@link Fault#PG_FAILOVER}), all shapes. */
    static Settings of(String mode, long seed, Duration duration, int resources, Path dir) {
      return new Settings(
          mode,
          seed,
          duration,
          4,
          resources,
          1000,
          EnumSet.complementOf(EnumSet.of(Fault.PG_FAILOVER)),
          "",
          dir);
    }

    Settings withShapes(String only) {
      return new Settings(mode, seed, duration, workers, resources, leaseMs, faults, only, dir);
    }

    Settings withFaults(Set<Fault> kinds) {
      return new Settings(mode, seed, duration, workers, resources, leaseMs, kinds, shapes, dir);
    }
  }

  /** The figures of one run. */
  record Result(
      Settings settings,
      Map<Fault, Integer> faults,
      Map<String, Long> events,
      long accepted,
      long registrations,
      long counterRecoveries,
      Checker.Result check,
      Duration took) {

    long event(String name) {
      return events.getOrDefault(name, 0L);
    }

    /** The configured fault kinds that were never injected. */
    Set<Fault> faultsNotFired() {
      Set<Fault> missing = EnumSet.noneOf(Fault.class);
      for (Fault f : settings.faults) {
        if (faults.getOrDefault(f, 0) == 0) {
          missing.add(f);
        }
      }
      return missing;
    }

    String summary() {
      return String.format(
          Locale.ROOT,
          "mode=%s seed=%d %ds: faults=%s attempted=%d accepted=%d (db) rejected=%d errors=%d"
              + " leases=%d lost-while-working=%d crashes=%d counter-recoveries=%d"
              + " violations=%d %s%s",
          settings.mode,
          settings.seed,
          took.toSeconds(),
          faults,
          event("ATTEMPT"),
          accepted,
          event("REJECT"),
          event("ERROR"),
          event("ACQUIRED"),
          event("LOST"),
          event("CRASH"),
          counterRecoveries,
          check.total(),
          check.violations(),
          check.examples().isEmpty() ? "" : "\n  " + String.join("\n  ", check.examples()));
    }
  }

  private final Settings settings;
  private final ChaosDatabase database;
  private final Random order;
  private final Random random;
  private final List<Fault> deck = new ArrayList<>();
  private final String suffix;
  private final String schema;
  private final String fenceSchema;
  private final Map<Fault, Integer> faultCounts = new EnumMap<>(Fault.class);
  private final List<WorkerProc> workers = new ArrayList<>();
  private final Map<Integer, Boolean> paused = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
  private RedisNode primary;
  private RedisNode replica;
  private TcpProxy proxy;
  private volatile boolean stopping;

  private ChaosRun(Settings settings, ChaosDatabase database) {
    this.settings = settings;
    this.database = database;
    this.order = new Random(settings.seed);
    this.random = new Random(settings.seed ^ 0x5DEECE66DL);
    this.suffix = Long.toHexString(new Random().nextLong() & 0xffffffffffL);
    this.schema = database.schemaName(suffix);
    this.fenceSchema = database.fenceSchemaName(suffix);
    for (Fault f : Fault.values()) {
      faultCounts.put(f, 0);
    }
  }

  static Result run(Settings settings) throws Exception {
    return run(settings, PostgresChaos.INSTANCE);
  }

  /** A run on {@code database} (only the guarded mode and the fencing-off control on MariaDB). */
  static Result run(Settings settings, ChaosDatabase database) throws Exception {
    ChaosRun run = new ChaosRun(settings, database);
    Thread hook = new Thread(run::cleanUp, "chaos-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return run.execute();
    } finally {
      run.cleanUp();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
    }
  }

  private Result execute() throws Exception {
    long started = System.nanoTime();
    Files.createDirectories(settings.dir);
    setUpDatabase();
    primary = RedisNode.start(settings.dir, 0);
    replica = RedisNode.start(settings.dir, primary.port());
    proxy = new TcpProxy(primary.port());
    for (int i = 0; i < settings.workers; i++) {
      WorkerProc w = new WorkerProc(i);
      workers.add(w);
      w.start();
    }
    awaitWorkersStarted();
    // The duration counts from here: faults on JVMs still starting would bite nothing.
    long deadline = System.nanoTime() + settings.duration.toNanos();
    while (System.nanoTime() - deadline < 0) {
      restartDeadWorkers();
      if (!settings.faults.isEmpty()) {
        Fault fault = pick();
        try {
          String done = inject(fault);
          if (done != null) {
            faultCounts.merge(fault, 1, Integer::sum);
          } else {
            // skipped (nothing to bite at this moment): back at the bottom of the deck, so that
            // every kind still fires within the run
            deck.add(0, fault);
          }
          nemesisLog(fault + " " + (done == null ? "skipped" : done));
        } catch (RuntimeException e) {
          System.err.println("[chaos] fault " + fault + " failed: " + e);
          nemesisLog(fault + " failed " + e);
        }
      }
      sleep(200 + order.nextInt(900));
    }
    stopping = true;
    stopWorkers();
    Checker.Result check;
    long registrations;
    try (Connection c = DriverManager.getConnection(database.jdbc())) {
      check = Checker.check(c, schema, database);
      try (Statement s = c.createStatement();
          var rs = s.executeQuery("SELECT count(*) FROM " + schema + ".registrations")) {
        rs.next();
        registrations = rs.getLong(1);
      }
    }
    Map<String, Long> events = new ConcurrentHashMap<>();
    List<String> refused = new ArrayList<>();
    List<String> dropped = new ArrayList<>();
    long recoveries = 0;
    for (WorkerProc w : workers) {
      for (String line : Files.readAllLines(w.events, StandardCharsets.UTF_8)) {
        int space = line.indexOf(' ');
        String kind = space < 0 ? line : line.substring(0, space);
        events.merge(kind, 1L, Long::sum);
        if (kind.equals("REFUSED")) {
          refused.add("worker " + w.id + ": " + line);
        } else if (kind.equals("DROPPED")) {
          dropped.add("worker " + w.id + ": " + line);
        }
      }
      for (String line : Files.readAllLines(w.output, StandardCharsets.UTF_8)) {
        if (line.contains("Redis lost its counter")) {
          recoveries++;
        }
      }
    }
    check = check.plus("refused-current-holder", refused).plus("dropped-write", dropped);
    return new Result(
        settings,
        Map.copyOf(faultCounts),
        Map.copyOf(events),
        check.accepted(),
        registrations,
        recoveries,
        check,
        Duration.ofNanos(System.nanoTime() - started));
  }

  /**
   * Faults come from a shuffled deck holding each configured kind in proportion to its weight, so
   * every kind fires in each deck's length of run time (about 10 s) and the order depends on the
   * seed alone.
   */
  private Fault pick() {
    if (deck.isEmpty()) {
      for (Fault f : settings.faults) {
        for (int i = 0; i < f.weight; i++) {
          deck.add(f);
        }
      }
      Collections.shuffle(deck, order);
    }
    return deck.remove(deck.size() - 1);
  }

  /** Injects the fault; returns what was done, or null if it was skipped. */
  private String inject(Fault fault) throws Exception {
    long lease = settings.leaseMs;
    return switch (fault) {
      case PAUSE_WORKER -> {
        // Mostly a worker that holds a lease and is between two steps (its lease check done, its
        // write not yet sent): that pause makes a stale writer; a pause of a waiting worker bites
        // nothing.
        WorkerProc w = pauseTarget();
        if (paused.putIfAbsent(w.id, true) != null || !w.alive()) {
          paused.remove(w.id, true);
          yield null;
        }
        String last = w.lastEvent();
        w.signal("STOP");
        long pause = (long) (lease * (2 + random.nextDouble() * 2.5));
        timers.schedule(
            () -> {
              w.signal("CONT");
              paused.remove(w.id);
            },
            pause,
            TimeUnit.MILLISECONDS);
        yield "worker " + w.id + " for " + pause + " ms, its last event: " + last;
      }
      case KILL_WORKER -> {
        List<WorkerProc> running = workers.stream().filter(w -> !paused.containsKey(w.id)).toList();
        if (running.isEmpty()) {
          yield null;
        }
        WorkerProc w = running.get(random.nextInt(running.size()));
        w.kill();
        yield "worker " + w.id;
      }
      case REDIS_RESTART_EMPTY -> {
        primary.restartEmpty(0);
        proxy.cutAll();
        yield "primary on port " + primary.port();
      }
      case REDIS_FAILOVER -> {
        failOver();
        yield "new primary on port " + primary.port();
      }
      case CLIENT_PAUSE -> {
        long ms = (long) (lease * (1 + random.nextDouble() * 2));
        primary.cli("CLIENT", "PAUSE", Long.toString(ms), "ALL");
        yield ms + " ms";
      }
      case PG_TERMINATE -> {
        WorkerProc w = workers.get(random.nextInt(workers.size()));
        yield database.endConnections(w.appName()) + ", worker " + w.id;
      }
      case PROXY_STALL -> {
        long ms = (long) (lease * (0.5 + random.nextDouble() * 2));
        proxy.stall(ms);
        yield ms + " ms";
      }
      case PROXY_CUT -> {
        proxy.cutAll();
        yield "all connections";
      }
      case CUT_IN_TRANSACTION -> cutInTransaction();
      case PG_FAILOVER -> database.promoteStandby(random);
    };
  }

  /**
   * The history the fence row's share lock exists for, built on purpose (random pauses cannot: a
   * frozen transaction is idle, and the lease-time idle timeout ends it). A worker that holds a
   * lease is asked for a held step ({@link Worker}): it writes 1-3 items in an open transaction,
   * says {@code HOLDING}, and keeps the transaction open and busy. The nemesis then deletes the
   * worker's lock in Redis and at once acquires the resource with the next token and registers
   * ({@link Successor}); the worker commits, with no further statement, as soon as that
   * registration waits for its transaction (the share lock its writes took on the fence row) or has
   * committed (nothing locked the row). With the lock, the holder commits before the registration;
   * without it, its commit lands after the registration and the checker sees {@code stale-accepted}
   * and {@code not-registered-holder}. Skipped (not counted as fired) if no worker holds a lease,
   * the asked worker wrote nothing within 3 s, or it did not commit on seeing the successor.
   */
  private String cutInTransaction() throws Exception {
    primary.cli("PING"); // waits out a CLIENT PAUSE, which would hold the cut up
    try (Successor successor =
        Successor.connect(
            primary.port(),
            "it-" + suffix + ":",
            settings.mode,
            schema,
            fenceSchema,
            appPrefix() + Successor.APP_SUFFIX,
            settings.leaseMs)) {
      for (int tries = 0; tries < 3; tries++) {
        List<WorkerProc> holders = awaitHolders(2000);
        if (holders.isEmpty()) {
          nemesisLog(Fault.CUT_IN_TRANSACTION + " missed: no worker held a lease for 2 s");
          continue;
        }
        WorkerProc w = holders.get(random.nextInt(holders.size()));
        String done = cutInTransaction(w, successor);
        if (done != null) {
          return done;
        }
      }
      return null;
    }
  }

  /** One try of {@link #cutInTransaction()} with worker {@code w}; null if it missed. */
  private String cutInTransaction(WorkerProc w, Successor successor) throws Exception {
    long since = w.eventCount();
    Files.writeString(w.holdRequest, "");
    String holding = w.awaitEvent("HOLDING", since, 1500);
    if (holding == null && Files.deleteIfExists(w.holdRequest)) {
      nemesisLog(Fault.CUT_IN_TRANSACTION + " missed: worker " + w.id + " took no request");
      return null;
    }
    if (holding == null) {
      holding = w.awaitEvent("HOLDING", since, 1500);
      if (holding == null) {
        nemesisLog(Fault.CUT_IN_TRANSACTION + " missed: worker " + w.id + " held nothing");
        return null;
      }
    }
    String[] f = holding.split(" ");
    String resource = f[2];
    String attempt = f[5];
    long started = System.nanoTime();
    long token;
    try {
      successor.deleteLock(resource);
      token = successor.takeOver(resource);
    } catch (SQLException | RuntimeException e) {
      // The holder waits out its two lease times and commits: no successor, no share-lock history.
      nemesisLog(Fault.CUT_IN_TRANSACTION + " missed: the successor failed: " + e);
      w.awaitEvent("HELD", since, 3000);
      return null;
    }
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    String held = w.awaitEvent("HELD", since, 3000);
    String done =
        "worker "
            + w.id
            + " held "
            + resource
            + " token "
            + f[3]
            + " ("
            + attempt
            + "); successor token "
            + token
            + " acquired and registered in "
            + tookMs
            + " ms; the holder: "
            + held;
    if (held == null || held.contains(" timeout ")) {
      // The holder committed without the successor in sight, or never: not this fault's history.
      nemesisLog(Fault.CUT_IN_TRANSACTION + " missed: " + done);
      return null;
    }
    return done;
  }

  /** Running, unpaused workers holding a lease, polled for up to {@code ms}. */
  private List<WorkerProc> awaitHolders(long ms) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    do {
      List<WorkerProc> holders =
          workers.stream()
              .filter(w -> !paused.containsKey(w.id) && w.alive() && w.holding())
              .toList();
      if (!holders.isEmpty()) {
        return holders;
      }
      sleep(10);
    } while (System.nanoTime() - deadline < 0);
    return List.of();
  }

  private String appPrefix() {
    return "fencing-it-" + suffix;
  }

  /** Appends a line to the run's {@code nemesis.log} (what was injected, when). */
  private void nemesisLog(String line) {
    try {
      Files.writeString(
          settings.dir.resolve("nemesis.log"),
          System.currentTimeMillis() + " " + line + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.err.println("[chaos] nemesis log: " + e);
    }
  }

  /**
   * The replica stops taking the stream (SIGSTOP) while the primary keeps acknowledging INCRs, the
   * primary dies, the replica resumes and is promoted: acknowledged increments are lost and Redis
   * hands out tokens again. A fresh replica of the new primary is started.
   */
  private void failOver() {
    replica.signal("STOP");
    sleep(200 + random.nextInt(800));
    primary.kill();
    replica.signal("CONT");
    replica.cli("REPLICAOF", "NO", "ONE");
    proxy.retarget(replica.port());
    RedisNode old = primary;
    primary = replica;
    replica = RedisNode.start(settings.dir, primary.port());
    old.close();
  }

  private void setUpDatabase() throws SQLException {
    database.requireReachable();
    try (Connection c = DriverManager.getConnection(database.jdbc())) {
      database.create(c, schema, settings.resources);
    }
    if (!settings.mode.equals("off")) {
      database.installFence(schema, fenceSchema, settings.mode);
    }
  }

  private WorkerProc pauseTarget() {
    if (random.nextInt(5) == 0) {
      return workers.get(random.nextInt(workers.size()));
    }
    WorkerProc between = awaitBetweenSteps(300);
    if (between != null) {
      return between;
    }
    List<WorkerProc> holders = workers.stream().filter(WorkerProc::holding).toList();
    return holders.isEmpty()
        ? workers.get(random.nextInt(workers.size()))
        : holders.get(random.nextInt(holders.size()));
  }

  /** A running, unpaused worker between two steps of a job, polled for up to {@code ms}. */
  private WorkerProc awaitBetweenSteps(long ms) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    do {
      List<WorkerProc> between =
          workers.stream()
              .filter(w -> !paused.containsKey(w.id) && w.alive() && w.betweenSteps())
              .toList();
      if (!between.isEmpty()) {
        return between.get(random.nextInt(between.size()));
      }
      sleep(10);
    } while (System.nanoTime() - deadline < 0);
    return null;
  }

  /** Waits (at most 60 s) until every worker has written its first event. */
  private void awaitWorkersStarted() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (workers.stream().anyMatch(w -> w.lastEvent().isEmpty())) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "workers did not start within 60 s; see their logs under " + settings.dir);
      }
      sleep(50);
    }
    nemesisLog("workers started");
  }

  private void restartDeadWorkers() {
    for (WorkerProc w : workers) {
      if (!w.alive() && !stopping) {
        w.start();
      }
    }
  }

  private void stopWorkers() {
    for (WorkerProc w : workers) {
      w.signal("CONT");
      w.kill();
    }
  }

  private synchronized void cleanUp() {
    stopping = true;
    timers.shutdownNow();
    for (WorkerProc w : workers) {
      w.signal("CONT");
      w.kill();
    }
    if (proxy != null) {
      proxy.close();
      proxy = null;
    }
    for (RedisNode node : new RedisNode[] {primary, replica}) {
      if (node != null) {
        try {
          node.close();
        } catch (RuntimeException e) {
          System.err.println("[chaos] stopping redis: " + e);
        }
      }
    }
    primary = null;
    replica = null;
    try {
      boolean keep = Boolean.getBoolean("chaos.keepSchema");
      database.cleanUp(suffix, schema, fenceSchema, keep);
      if (keep) {
        System.err.println("[chaos] kept schemas " + schema + ", " + fenceSchema);
      }
    } catch (SQLException e) {
      System.err.println("[chaos] dropping schemas: " + e);
    }
  }

  /** A worker JVM, restarted after kill -9 or a crash. */
  private final class WorkerProc {
    final int id;
    final Path events;
    final Path output;
    final Path holdRequest;
    private volatile Process process;
    private int starts;

    WorkerProc(int id) {
      this.id = id;
      this.events = settings.dir.resolve("worker-" + id + ".events");
      this.output = settings.dir.resolve("worker-" + id + ".log");
      this.holdRequest = settings.dir.resolve("worker-" + id + ".hold");
    }

    /** Whether its last event says it is inside a job (holding, or believing it holds, a lease). */
    boolean holding() {
      String last = lastEvent();
      return last.startsWith("ACQUIRED") || last.startsWith("ATTEMPT") || last.startsWith("ACCEPT");
    }

    /** Whether its last event says it is between two steps of a job. */
    boolean betweenSteps() {
      String last = lastEvent();
      return last.startsWith("ACQUIRED") || last.startsWith("ACCEPT");
    }

    private String lastEvent() {
      try (RandomAccessFile f = new RandomAccessFile(events.toFile(), "r")) {
        long length = f.length();
        int n = (int) Math.min(length, 300);
        byte[] tail = new byte[n];
        f.seek(length - n);
        f.readFully(tail);
        String text = new String(tail, StandardCharsets.UTF_8).strip();
        return text.substring(text.lastIndexOf('\n') + 1);
      } catch (IOException e) {
        return "";
      }
    }

    String appName() {
      return appPrefix() + "-w" + id;
    }

    /** The number of events written so far. */
    long eventCount() {
      try (Stream<String> lines = Files.lines(events, StandardCharsets.UTF_8)) {
        return lines.count();
      } catch (IOException e) {
        return 0;
      }
    }

    /**
     * The first event of {@code kind} after the first {@code skip} events, polled for up to {@code
     * ms}; null if none came.
     */
    String awaitEvent(String kind, long skip, long ms) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
      do {
        try (Stream<String> lines = Files.lines(events, StandardCharsets.UTF_8)) {
          String found =
              lines.skip(skip).filter(l -> l.startsWith(kind + " ")).findFirst().orElse(null);
          if (found != null) {
            return found;
          }
        } catch (IOException e) {
          // not written yet
        }
        sleep(5);
      } while (System.nanoTime() - deadline < 0);
      return null;
    }

    boolean alive() {
      Process p = process;
      return p != null && p.isAlive();
    }

    synchronized void start() {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(
          List.of(
              "-Xmx128m",
              "-XX:+UseSerialGC",
              "-XX:TieredStopAtLevel=1",
              "-Xshare:auto",
              "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
              "-cp",
              classPath(),
              Worker.class.getName(),
              "id=" + id,
              "mode=" + settings.mode,
              "redis=redis://127.0.0.1:" + proxy.port(),
              "jdbc=" + workerJdbc(),
              "db=" + database.name(),
              "schema=" + schema,
              "fenceSchema=" + fenceSchema,
              "prefix=it-" + suffix + ":",
              "leaseMs=" + settings.leaseMs,
              "resources=" + settings.resources,
              "seed=" + (settings.seed * 1_000_003L + 7919L * (id + 1) + 104_729L * starts),
              "start=" + starts++,
              "shapes=" + settings.shapes,
              "events=" + events,
              "appName=" + appName(),
              "hold=" + holdRequest,
              "successorApp=" + appPrefix() + Successor.APP_SUFFIX));
      try {
        process =
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
                .start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private String workerJdbc() {
      try {
        return database.workerJdbc(appName(), schema, fenceSchema);
      } catch (SQLException e) {
        throw new IllegalStateException("preparing the database user of worker " + id, e);
      }
    }

    void signal(String signal) {
      Process p = process;
      if (p != null && p.isAlive()) {
        exec(List.of("kill", "-" + signal, Long.toString(p.pid())));
      }
    }

    synchronized void kill() {
      Process p = process;
      if (p != null) {
        p.destroyForcibly();
        try {
          p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  static String classPath() {
    String cp = System.getProperty("surefire.test.class.path");
    return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
  }

  static String exec(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(command + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static void deleteRecursively(Path path) {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      walk.sorted((a, b) -> b.getNameCount() - a.getNameCount())
          .map(Path::toFile)
          .forEach(File::delete);
    } catch (IOException e) {
      System.err.println("[chaos] deleting " + path + ": " + e);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
