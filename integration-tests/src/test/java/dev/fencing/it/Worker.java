package dev.fencing.it;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.StaleViews;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.StaleTokenException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One worker process of the suite. It loops: pick a resource, acquire its lease, pick a {@link
 * Shape} for the job, then run a sequence of steps, each (mostly) one transaction that reads the
 * resource's {@code seq}, appends {@code (resource, seq + 1, token, lease id)} to the ledger,
 * writes some of the resource's {@code items} (and, in the SHARED shape, rows of the table written
 * under every resource) and stores {@code seq + 1}; then it releases the lease, or sometimes
 * crashes without releasing. Every row it writes carries its token, lease id and attempt id.
 *
 * <p>Before every step the worker checks its real lease ({@code isHeld()}); the step itself runs
 * with a view of the lease that keeps believing it is held, as a process does that passed its
 * checks an instant before it froze (GC pause, {@code SIGSTOP}). A random sleep between the check
 * and the write widens that window, so the database guard is what stops stale writes.
 *
 * <p>Modes: {@code guarded} (GuardedStatements on a FencedDataSource, registration through
 * FencedLeaseManager), {@code trigger} (the same plain SQL as {@code off}, on a FencedDataSource,
 * with the enforcement trigger on every table; plus, after some jobs, a write that forgot the
 * scope), {@code off} (plain RedisLeaseManager and plain SQL: fencing switched off; the worker logs
 * its acquisition as its registration for the checker).
 *
 * <p>Events go to an append-only file, one line each, so they survive {@code kill -9}: {@code
 * ACQUIRED r t lease shape}, {@code ATTEMPT r t a}, {@code ACCEPT r t a}, {@code REJECT r t a},
 * {@code ERROR r t a msg}, {@code LOST r t}, {@code CRASH}, {@code UNSCOPED r 0 a
 * accepted|refused}, {@code HOLDING r t lease a} and {@code HELD r t a waited|registered|timeout}
 * (a held step, see {@link #heldStep}), and two that the run counts as violations: {@code REFUSED}
 * (rejected while the fence still names this lease) and {@code DROPPED} (an upsert wrote nothing
 * while the fence names this lease).
 */
public final class Worker {

  private final Map<String, String> args;
  private final int id;
  private final int start;
  private final String mode;
  private final String schema;
  private final String fenceSchema;
  private final ChaosDatabase database;
  private final Set<Shape> shapes;
  private HikariDataSource pool;
  private StaleTokenException caught;
  private final Random random;
  private final OutputStream events;
  private final int resources;
  private final int stepJitterMs;
  private final int txPauseMs;
  private final double crashProbability;
  private final long leaseMs;
  private final Path holdRequest;
  private final String successorApp;
  private long attempts;

  private Worker(Map<String, String> args) throws IOException {
    this.args = args;
    this.id = Integer.parseInt(args.get("id"));
    this.start = Integer.parseInt(args.getOrDefault("start", "0"));
    this.mode = args.get("mode");
    this.schema = args.get("schema");
    this.fenceSchema = args.get("fenceSchema");
    this.database = ChaosDatabase.named(args.getOrDefault("db", "postgres"));
    String only = args.getOrDefault("shapes", "");
    this.shapes =
        only.isBlank()
            ? EnumSet.allOf(Shape.class)
            : Arrays.stream(only.split(","))
                .map(x -> Shape.valueOf(x.trim().toUpperCase(Locale.ROOT)))
                .collect(Collectors.toCollection(() -> EnumSet.noneOf(Shape.class)));
    this.random = new Random(Long.parseLong(args.get("seed")));
    this.events = new FileOutputStream(args.get("events"), true);
    this.resources = Integer.parseInt(args.get("resources"));
    this.stepJitterMs = Integer.parseInt(args.getOrDefault("jitterMs", "60"));
    this.txPauseMs = Integer.parseInt(args.getOrDefault("txPauseMs", "30"));
    this.crashProbability = Double.parseDouble(args.getOrDefault("crash", "0.02"));
    this.leaseMs = Long.parseLong(args.get("leaseMs"));
    String hold = args.getOrDefault("hold", "");
    this.holdRequest = hold.isBlank() ? null : Path.of(hold);
    this.successorApp = args.getOrDefault("successorApp", "");
  }

  /**
   * Entry point; arguments are {@code key=value}: id, mode, redis, jdbc, db ({@link
   * ChaosDatabase#name()}, postgres if absent), schema, fenceSchema, prefix, leaseMs, resources,
   * seed, start (how many times this worker was started before), events, jitterMs, txPauseMs,
   * crash, appName, shapes (comma-separated {@link Shape} names; all if absent), hold (the file
   * whose appearance asks for a {@link #heldStep held step}) and successorApp (the application name
   * of the successor that the held step waits for).
   */
  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new HashMap<>();
    for (String arg : argv) {
      int eq = arg.indexOf('=');
      args.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    Worker worker = new Worker(args);
    try {
      worker.run();
    } catch (Throwable e) {
      worker.log("DIED " + oneLine(e));
      throw e;
    }
  }

  private void log(String line) {
    try {
      int space = line.indexOf(' ');
      String stamped =
          space < 0
              ? line + " " + System.currentTimeMillis()
              : line.substring(0, space) + " " + System.currentTimeMillis() + line.substring(space);
      events.write((stamped + "\n").getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private void run() throws Exception {
    Config config = new Config();
    config
        .useSingleServer()
        .setAddress(args.get("redis"))
        .setTimeout(1000)
        .setConnectTimeout(1000)
        .setRetryAttempts(1)
        .setRetryDelay(new org.redisson.config.ConstantDelay(Duration.ofMillis(100)))
        .setReconnectionDelay(new org.redisson.config.ConstantDelay(Duration.ofMillis(100)))
        .setPingConnectionInterval(500)
        .setConnectionMinimumIdleSize(2)
        .setConnectionPoolSize(8)
        .setSubscriptionConnectionMinimumIdleSize(1);
    RedissonClient redisson = connect(config);
    HikariConfig pc = new HikariConfig();
    pc.setJdbcUrl(args.get("jdbc"));
    pc.setMaximumPoolSize(3);
    pc.setMinimumIdle(1);
    pc.setConnectionTimeout(5000);
    pc.setPoolName("it-worker-" + id);
    database.workerPoolProperties(args.get("appName")).forEach(pc::addDataSourceProperty);
    pool = new HikariDataSource(pc);
    FencedDataSource db =
        FencedDataSource.wrap(
            pool,
            FenceOptions.defaults()
                .withSchema(args.get("fenceSchema"))
                .withTriggerMode(mode.equals("trigger")));
    LeaseOptions options =
        LeaseOptions.defaults()
            .withKeyPrefix(args.get("prefix"))
            .withOperationTimeout(Duration.ofSeconds(2));
    LeaseRequest request =
        LeaseRequest.forLeaseTime(Duration.ofMillis(Long.parseLong(args.get("leaseMs"))))
            .withMaxWait(Duration.ofSeconds(2));
    RedisLeaseManager redisLeases = RedisLeaseManager.create(redisson, options);
    LeaseManager leases =
        mode.equals("off") ? redisLeases : new FencedLeaseManager(redisLeases, db.fence());
    log("START " + id + " " + ProcessHandle.current().pid());
    long failingSince = 0;
    while (true) {
      String resource = "r" + random.nextInt(resources);
      Lease lease;
      try {
        lease = leases.acquire(resource, request);
        failingSince = 0;
      } catch (RuntimeException e) {
        log("NOLEASE " + resource + " " + oneLine(e));
        if (e instanceof dev.fencing.core.LeaseBackendException) {
          long now = System.nanoTime();
          if (failingSince == 0) {
            failingSince = now;
          } else if (now - failingSince > 2_000_000_000L) {
            // The client's pool sometimes stays broken after the server it knew went away:
            // start a new client, as an operator restarting the service would.
            log("RECONNECT " + oneLine(e));
            redisLeases.close();
            RedissonClient old = redisson;
            new Thread(old::shutdown).start();
            redisson = connect(config);
            redisLeases = RedisLeaseManager.create(redisson, options);
            leases =
                mode.equals("off") ? redisLeases : new FencedLeaseManager(redisLeases, db.fence());
            failingSince = 0;
          }
        }
        sleep(50 + random.nextInt(100));
        continue;
      }
      job(lease, pool, db);
    }
  }

  private RedissonClient connect(Config config) {
    while (true) {
      try {
        return Redisson.create(new Config(config));
      } catch (RuntimeException e) {
        log("NOREDIS " + oneLine(e));
        sleep(200);
      }
    }
  }

  /**
   * Transaction shapes, one per job, chosen by the worker's seeded random (or restricted by the
   * {@code shapes} argument).
   */
  enum Shape {
    /** Read seq, append to the ledger, upsert 1-3 items, store seq. */
    CHAIN,
    /** Like CHAIN, the items as one JDBC batch, with a pause before the commit. */
    BATCH,
    /**
     * A DAO that catches a stale rejection and goes on in the same transaction (a batch of items,
     * then single items, then the ledger step), then commits what is left.
     */
    CONTINUE,
    /**
     * First statement in auto-commit, then {@code setAutoCommit(false)}, a CHAIN step, commit, and
     * back to the pool without restoring auto-commit.
     */
    TOGGLE,
    /** A CHAIN step plus 1-2 rows of the table written under every resource. */
    SHARED,
    /**
     * 1-3 items and nothing else: no ledger step, no {@code seq}, so a stale step touches no row
     * its successor is sure to have written, and only the resource fence can stop it (every other
     * shape also writes the resource's row, which the row guard alone protects once the successor
     * stored its first step).
     */
    ITEMS
  }

  private static final Shape[] SHAPE_WEIGHTS = {
    Shape.CHAIN,
    Shape.CHAIN,
    Shape.BATCH,
    Shape.BATCH,
    Shape.CONTINUE,
    Shape.CONTINUE,
    Shape.TOGGLE,
    Shape.SHARED,
    Shape.SHARED,
    Shape.ITEMS,
    Shape.ITEMS
  };

  private Shape pickShape() {
    while (true) {
      Shape shape = SHAPE_WEIGHTS[random.nextInt(SHAPE_WEIGHTS.length)];
      if (shapes.contains(shape)) {
        return shape;
      }
    }
  }

  private void job(Lease lease, HikariDataSource pool, FencedDataSource db) {
    String resource = lease.resource();
    long token = lease.token().value();
    Shape shape = pickShape();
    AtomicBoolean lost = new AtomicBoolean();
    lease.onLoss((l, reason) -> lost.set(true));
    log("ACQUIRED " + resource + " " + token + " " + lease.leaseId() + " " + shape);
    if (mode.equals("off") && !logAcquisition(pool, lease)) {
      lease.close();
      return;
    }
    // The worker checked the real lease just before the step; from then on only the database can
    // stop the write.
    Lease believed = StaleViews.believedHeld(lease);
    int steps = 5 + random.nextInt(36);
    boolean stopped = false;
    for (int i = 0; i < steps && !stopped; i++) {
      if (!lease.isHeld()) {
        break;
      }
      // The process passed its check; a pause from here on makes it a stale writer.
      sleep(random.nextInt(stepJitterMs + 1));
      boolean held = holdRequested();
      String attempt = id + "." + start + "-" + (++attempts) + (held ? "-held" : "");
      log("ATTEMPT " + resource + " " + token + " " + attempt);
      try {
        int rejected;
        if (mode.equals("off")) {
          rejected = held ? heldStep(pool, lease, attempt) : step(pool, lease, attempt, shape);
        } else {
          rejected =
              Fencing.call(
                  believed,
                  () -> held ? heldStep(db, lease, attempt) : step(db, lease, attempt, shape));
        }
        if (rejected == 0) {
          log("ACCEPT " + resource + " " + token + " " + attempt);
        } else {
          log("REJECT " + resource + " " + token + " " + attempt + " continued after " + rejected);
          checkRefusal(pool, lease, attempt, caught);
          stopped = true;
        }
      } catch (StaleTokenException e) {
        log("REJECT " + resource + " " + token + " " + attempt + " " + oneLine(e));
        checkRefusal(pool, lease, attempt, e);
        stopped = true;
      } catch (SQLException | RuntimeException e) {
        log("ERROR " + resource + " " + token + " " + attempt + " " + oneLine(e));
        stopped = true;
      }
    }
    if (lost.get() || !lease.isHeld()) {
      log("LOST " + resource + " " + token);
    }
    if (random.nextDouble() < crashProbability) {
      log("CRASH " + resource + " " + token);
      Runtime.getRuntime().halt(3);
    }
    try {
      lease.close();
    } catch (RuntimeException e) {
      log("RELEASEFAIL " + resource + " " + token + " " + oneLine(e));
    }
    if (mode.equals("trigger") && random.nextInt(3) == 0) {
      unscopedWrite(db, resource);
    }
  }

  /**
   * A DAO that forgot the scope writes to a strictly enforced table. The trigger must refuse it; if
   * it is accepted, the checker sees a write with token 0 by a lease nobody registered.
   */
  private void unscopedWrite(FencedDataSource db, String resource) {
    String attempt = id + "." + start + "-unscoped-" + (++attempts);
    try (Connection c = db.getConnection();
        PreparedStatement upsert = c.prepareStatement(database.plainItemUpsert(schema))) {
      upsert.setString(1, resource);
      upsert.setInt(2, random.nextInt(ChaosSchema.ITEMS));
      upsert.setLong(3, 0);
      upsert.setString(4, "unscoped");
      upsert.setString(5, attempt);
      upsert.executeUpdate();
      if (!c.getAutoCommit()) {
        c.commit();
      }
      log("UNSCOPED " + resource + " 0 " + attempt + " accepted");
    } catch (SQLException e) {
      log("UNSCOPED " + resource + " 0 " + attempt + " refused " + oneLine(e));
    }
  }

  /**
   * After a rejection: if the fence still names this lease, of the current epoch, no newer holder
   * had registered (a registration never names a superseded lease again), so the database refused
   * its current holder. (A registration of an older epoch, made before a promotion, is refused by
   * design until the holder registers again.)
   */
  private void checkRefusal(
      HikariDataSource pool, Lease lease, String attempt, StaleTokenException e) {
    if (mode.equals("off")) {
      return;
    }
    try (Connection c = pool.getConnection();
        PreparedStatement read =
            c.prepareStatement(
                "SELECT token, lease_id FROM "
                    + fenceSchema
                    + ".fence WHERE resource = ?"
                    + database.ofCurrentEpoch(fenceSchema))) {
      read.setString(1, lease.resource());
      try (ResultSet rs = read.executeQuery()) {
        if (rs.next() && lease.leaseId().equals(rs.getString(2))) {
          log(
              "REFUSED "
                  + lease.resource()
                  + " "
                  + lease.token().value()
                  + " "
                  + attempt
                  + " fence still names this lease: "
                  + oneLine(e));
        }
      }
    } catch (SQLException readFailed) {
      log("NOCHECK " + lease.resource() + " " + attempt + " " + oneLine(readFailed));
    }
  }

  /** With fencing off, the acquisition stands in for the registration the checker compares with. */
  private boolean logAcquisition(HikariDataSource pool, Lease lease) {
    try (Connection c = pool.getConnection();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO "
                    + schema
                    + ".registrations (resource, token, lease_id) VALUES (?, ?, ?)")) {
      insert.setString(1, lease.resource());
      insert.setLong(2, lease.token().value());
      insert.setString(3, lease.leaseId());
      insert.executeUpdate();
      return true;
    } catch (SQLException e) {
      log("ERROR " + lease.resource() + " " + lease.token().value() + " - " + oneLine(e));
      return false;
    }
  }

  /**
   * One step in one transaction (TOGGLE: one auto-commit statement first). Returns the number of
   * stale rejections a CONTINUE step caught and went on after (0 for the other shapes, which let
   * the rejection end the step).
   */
  private int step(DataSource ds, Lease lease, String attempt, Shape shape) throws SQLException {
    boolean guarded = mode.equals("guarded");
    try (Connection c = ds.getConnection()) {
      if (shape == Shape.TOGGLE) {
        c.setAutoCommit(true);
        try (PreparedStatement first = itemUpsert(c, guarded)) {
          bindItem(first, lease, random.nextInt(ChaosSchema.ITEMS), attempt);
          expectOne(first.executeUpdate(), lease, attempt, "auto-commit item");
        }
      }
      c.setAutoCommit(false);
      try {
        int rejected = 0;
        switch (shape) {
          case CHAIN, TOGGLE, SHARED -> {
            long seq = readSeq(c, lease);
            appendLedger(c, guarded, lease, attempt, seq + 1);
            int n = 1 + random.nextInt(3);
            for (int i = 0; i < n; i++) {
              try (PreparedStatement item = itemUpsert(c, guarded)) {
                bindItem(item, lease, random.nextInt(ChaosSchema.ITEMS), attempt);
                expectOne(item.executeUpdate(), lease, attempt, "item");
              }
            }
            if (shape == Shape.SHARED) {
              writeShared(c, guarded, lease, attempt, 1 + random.nextInt(2));
            }
            storeSeq(c, guarded, lease, seq + 1);
          }
          case ITEMS -> {
            int n = 1 + random.nextInt(3);
            for (int i = 0; i < n; i++) {
              try (PreparedStatement item = itemUpsert(c, guarded)) {
                bindItem(item, lease, random.nextInt(ChaosSchema.ITEMS), attempt);
                expectOne(item.executeUpdate(), lease, attempt, "item");
              }
            }
          }
          case BATCH -> {
            long seq = readSeq(c, lease);
            appendLedger(c, guarded, lease, attempt, seq + 1);
            itemBatch(c, guarded, lease, attempt);
            sleep(random.nextInt(txPauseMs + 1)); // racing a registration, lock held
            storeSeq(c, guarded, lease, seq + 1);
          }
          case CONTINUE -> {
            try {
              itemBatch(c, guarded, lease, attempt);
            } catch (StaleTokenException e) {
              rejected++;
              caught = e;
            }
            for (int i = 0; i < 2; i++) {
              try (PreparedStatement item = itemUpsert(c, guarded)) {
                bindItem(item, lease, random.nextInt(ChaosSchema.ITEMS), attempt);
                item.executeUpdate();
              } catch (StaleTokenException e) {
                rejected++;
                caught = e;
              }
            }
            try {
              long seq = readSeq(c, lease);
              appendLedger(c, guarded, lease, attempt, seq + 1);
              storeSeq(c, guarded, lease, seq + 1);
            } catch (StaleTokenException e) {
              rejected++;
              caught = e;
            }
          }
        }
        if (random.nextInt(4) == 0) {
          sleep(random.nextInt(txPauseMs + 1)); // a pause inside the open transaction
        }
        database.beforeCommit(c, schema);
        c.commit();
        return rejected;
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException ignored) {
          e.addSuppressed(ignored);
        }
        throw e;
      }
      // TOGGLE leaves auto-commit off: the DAO relies on the pool to restore it.
    }
  }

  /** Whether the nemesis asked for a held step (the request is consumed). */
  private boolean holdRequested() {
    if (holdRequest == null) {
      return false;
    }
    try {
      return Files.deleteIfExists(holdRequest);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The step the nemesis's {@code CUT_IN_TRANSACTION} fault asks for: 1-3 items (rows no successor
   * writes, so only the resource fence can refuse them) in an open transaction, then {@code
   * HOLDING} and a wait, the transaction kept busy, until the successor's registration either waits
   * for this transaction (the fence row's share lock, taken by the first write) or has committed
   * (nothing locked the row); then the commit, with no further statement. The nemesis meanwhile
   * deletes this lease's Redis key and acquires and registers as the successor. Waits at most two
   * lease times for it.
   */
  private int heldStep(DataSource ds, Lease lease, String attempt) throws SQLException {
    boolean guarded = mode.equals("guarded");
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
          try (PreparedStatement item = itemUpsert(c, guarded)) {
            bindItem(item, lease, random.nextInt(ChaosSchema.ITEMS), attempt);
            expectOne(item.executeUpdate(), lease, attempt, "item");
          }
        }
        log(
            "HOLDING "
                + lease.resource()
                + " "
                + lease.token().value()
                + " "
                + lease.leaseId()
                + " "
                + attempt);
        long started = System.nanoTime();
        String seen = awaitSuccessor(c, lease, started + leaseMs * 2_000_000L);
        log(
            "HELD "
                + lease.resource()
                + " "
                + lease.token().value()
                + " "
                + attempt
                + " "
                + seen
                + " after "
                + (System.nanoTime() - started) / 1_000_000
                + " ms, committing");
        c.commit();
        return 0;
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException ignored) {
          e.addSuppressed(ignored);
        }
        throw e;
      }
    }
  }

  /**
   * Polls, inside the held transaction (so it is never idle), until the successor waits for this
   * transaction ({@code waited}) or a newer registration of the resource has committed ({@code
   * registered}); {@code timeout} if neither happened by {@code deadline}. The server keeps one
   * view of {@code pg_stat_activity} per transaction: each poll drops it first.
   */
  private String awaitSuccessor(Connection c, Lease lease, long deadline) throws SQLException {
    try (PreparedStatement fresh =
            c.prepareStatement("SELECT pg_catalog.pg_stat_clear_snapshot()");
        PreparedStatement poll =
            c.prepareStatement(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a"
                    + " WHERE a.application_name = ?"
                    + " AND pg_catalog.pg_backend_pid() = ANY (pg_catalog.pg_blocking_pids(a.pid))),"
                    + " EXISTS (SELECT 1 FROM "
                    + schema
                    + ".registrations r WHERE r.resource = ? AND r.token > ?)")) {
      poll.setString(1, successorApp);
      poll.setString(2, lease.resource());
      poll.setLong(3, lease.token().value());
      while (System.nanoTime() - deadline < 0) {
        fresh.execute();
        try (ResultSet rs = poll.executeQuery()) {
          rs.next();
          if (rs.getBoolean(1)) {
            return "waited";
          }
          if (rs.getBoolean(2)) {
            return "registered";
          }
        }
        sleep(5);
      }
      return "timeout";
    }
  }

  private long readSeq(Connection c, Lease lease) throws SQLException {
    try (PreparedStatement read =
        c.prepareStatement("SELECT seq FROM " + schema + ".resources WHERE resource = ?")) {
      read.setString(1, lease.resource());
      try (ResultSet rs = read.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("no resource row for " + lease.resource());
        }
        return rs.getLong(1);
      }
    }
  }

  private void appendLedger(Connection c, boolean guarded, Lease lease, String attempt, long seq)
      throws SQLException {
    try (PreparedStatement insert =
        guarded
            ? GuardedStatements.insert(
                c, schema + ".ledger", "resource", "seq", "token", "lease_id", "worker", "attempt")
            : c.prepareStatement(
                "INSERT INTO "
                    + schema
                    + ".ledger (resource, seq, token, lease_id, worker, attempt)"
                    + " VALUES (?, ?, ?, ?, ?, ?)")) {
      insert.setString(1, lease.resource());
      insert.setLong(2, seq);
      insert.setLong(3, lease.token().value());
      insert.setString(4, lease.leaseId());
      insert.setInt(5, id);
      insert.setString(6, attempt);
      if (insert.executeUpdate() != 1) {
        throw new SQLException("ledger insert affected no row");
      }
    }
  }

  private void storeSeq(Connection c, boolean guarded, Lease lease, long seq) throws SQLException {
    try (PreparedStatement update =
        guarded
            ? GuardedStatements.update(c, schema + ".resources", "seq = ?", "resource = ?")
            : c.prepareStatement(
                "UPDATE " + schema + ".resources SET seq = ? WHERE resource = ?")) {
      update.setLong(1, seq);
      update.setString(2, lease.resource());
      if (update.executeUpdate() != 1) {
        throw new SQLException("resource update affected no row");
      }
    }
  }

  private PreparedStatement itemUpsert(Connection c, boolean guarded) throws SQLException {
    return guarded
        ? GuardedStatements.upsert(
            c,
            schema + ".items",
            List.of("resource", "item", "token", "lease_id", "attempt"),
            List.of("resource", "item"))
        : c.prepareStatement(database.plainItemUpsert(schema));
  }

  private static void bindItem(PreparedStatement s, Lease lease, int item, String attempt)
      throws SQLException {
    s.setString(1, lease.resource());
    s.setInt(2, item);
    s.setLong(3, lease.token().value());
    s.setString(4, lease.leaseId());
    s.setString(5, attempt);
  }

  /** 3-8 distinct items of the resource in one JDBC batch. */
  private void itemBatch(Connection c, boolean guarded, Lease lease, String attempt)
      throws SQLException {
    int n = 3 + random.nextInt(6);
    int first = random.nextInt(ChaosSchema.ITEMS);
    try (PreparedStatement batch = itemUpsert(c, guarded)) {
      for (int i = 0; i < n; i++) {
        bindItem(batch, lease, (first + i * 7) % ChaosSchema.ITEMS, attempt);
        batch.addBatch();
      }
      for (int count : batch.executeBatch()) {
        if (count != 1 && count != Statement.SUCCESS_NO_INFO) {
          expectOne(count, lease, attempt, "batch item");
        }
      }
    }
  }

  private void writeShared(Connection c, boolean guarded, Lease lease, String attempt, int n)
      throws SQLException {
    for (int i = 0; i < n; i++) {
      try (PreparedStatement upsert =
          guarded
              ? GuardedStatements.upsert(
                  c,
                  schema + ".shared",
                  List.of("item", "resource", "token", "lease_id", "attempt"),
                  List.of("item"))
              : c.prepareStatement(database.plainSharedUpsert(schema))) {
        upsert.setInt(1, random.nextInt(ChaosSchema.SHARED));
        upsert.setString(2, lease.resource());
        upsert.setLong(3, lease.token().value());
        upsert.setString(4, lease.leaseId());
        upsert.setString(5, attempt);
        expectOne(upsert.executeUpdate(), lease, attempt, "shared row");
      }
    }
  }

  /**
   * An upsert always writes its row unless the guard refused it; an upsert that wrote nothing while
   * the fence still names this lease dropped the current holder's write without a word.
   */
  private void expectOne(int count, Lease lease, String attempt, String what) throws SQLException {
    if (database.upsertWroteItsRow(count)) {
      return;
    }
    if (!mode.equals("off")) {
      try (Connection c = pool.getConnection();
          PreparedStatement read =
              c.prepareStatement(
                  "SELECT lease_id FROM "
                      + fenceSchema
                      + ".fence WHERE resource = ?"
                      + database.ofCurrentEpoch(fenceSchema))) {
        read.setString(1, lease.resource());
        try (ResultSet rs = read.executeQuery()) {
          if (rs.next() && lease.leaseId().equals(rs.getString(1))) {
            log(
                "DROPPED "
                    + lease.resource()
                    + " "
                    + lease.token().value()
                    + " "
                    + attempt
                    + " "
                    + what
                    + " wrote "
                    + count
                    + " rows while the fence names this lease");
          }
        }
      }
    }
    throw new SQLException(what + " affected " + count + " rows");
  }

  private static String oneLine(Throwable e) {
    String m = e.getClass().getSimpleName() + ": " + e.getMessage();
    return m.replace('\n', ' ').replace('\r', ' ');
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
