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
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One worker process of the suite. It loops: pick a resource, acquire its lease, then write a
 * sequence of ledger entries, each one transaction that reads the resource's {@code seq}, appends
 * {@code (resource, seq + 1, token, lease id)} to the ledger and stores {@code seq + 1}; then it
 * releases the lease, or sometimes crashes without releasing.
 *
 * <p>Before every step the worker checks its real lease ({@code isHeld()}); the step itself runs
 * with a view of the lease that keeps believing it is held, as a process does that passed its
 * checks an instant before it froze (GC pause, {@code SIGSTOP}). A random sleep between the check
 * and the write widens that window, so the database guard is what stops stale writes.
 *
 * <p>Modes: {@code guarded} (GuardedStatements on a FencedDataSource, registration through
 * FencedLeaseManager), {@code trigger} (the same plain SQL as {@code off}, on a FencedDataSource,
 * with the enforcement trigger on both tables), {@code off} (plain RedisLeaseManager and plain SQL:
 * fencing switched off; the worker logs its acquisition as its registration for the checker).
 *
 * <p>Events go to an append-only file, one line each, so they survive {@code kill -9}: {@code
 * ACQUIRED r t}, {@code ATTEMPT r t a}, {@code ACCEPT r t a}, {@code REJECT r t a}, {@code ERROR r
 * t a msg}, {@code LOST r t}, {@code CRASH}.
 */
public final class Worker {

  private final Map<String, String> args;
  private final int id;
  private final String mode;
  private final String schema;
  private final Random random;
  private final OutputStream events;
  private final int resources;
  private final int stepJitterMs;
  private final double crashProbability;
  private long attempts;

  private Worker(Map<String, String> args) throws IOException {
    this.args = args;
    this.id = Integer.parseInt(args.get("id"));
    this.mode = args.get("mode");
    this.schema = args.get("schema");
    this.random = new Random(Long.parseLong(args.get("seed")) * 31 + id);
    this.events = new FileOutputStream(args.get("events"), true);
    this.resources = Integer.parseInt(args.get("resources"));
    this.stepJitterMs = Integer.parseInt(args.getOrDefault("jitterMs", "30"));
    this.crashProbability = Double.parseDouble(args.getOrDefault("crash", "0.02"));
  }

  /**
   * Entry point; arguments are {@code key=value}: id, mode, redis, jdbc, schema, fenceSchema,
   * prefix, leaseMs, resources, seed, events, jitterMs, crash, appName.
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
    pc.addDataSourceProperty("ApplicationName", args.get("appName"));
    HikariDataSource pool = new HikariDataSource(pc);
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

  private void job(Lease lease, HikariDataSource pool, FencedDataSource db) {
    String resource = lease.resource();
    long token = lease.token().value();
    AtomicBoolean lost = new AtomicBoolean();
    lease.onLoss((l, reason) -> lost.set(true));
    log("ACQUIRED " + resource + " " + token + " " + lease.leaseId());
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
      String attempt = id + "-" + (++attempts);
      log("ATTEMPT " + resource + " " + token + " " + attempt);
      try {
        if (mode.equals("off")) {
          step(pool, lease, attempt, false);
        } else {
          Fencing.run(believed, () -> step(db, lease, attempt, mode.equals("guarded")));
        }
        log("ACCEPT " + resource + " " + token + " " + attempt);
      } catch (StaleTokenException e) {
        log("REJECT " + resource + " " + token + " " + attempt + " " + oneLine(e));
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

  /** One ledger step in one transaction. */
  private void step(javax.sql.DataSource ds, Lease lease, String attempt, boolean guarded)
      throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        long seq;
        try (PreparedStatement read =
            c.prepareStatement("SELECT seq FROM " + schema + ".resources WHERE resource = ?")) {
          read.setString(1, lease.resource());
          try (ResultSet rs = read.executeQuery()) {
            if (!rs.next()) {
              throw new SQLException("no resource row for " + lease.resource());
            }
            seq = rs.getLong(1);
          }
        }
        if (random.nextInt(4) == 0) {
          sleep(random.nextInt(stepJitterMs + 1)); // a pause inside the open transaction
        }
        try (PreparedStatement insert =
            guarded
                ? GuardedStatements.insert(
                    c,
                    schema + ".ledger",
                    "resource",
                    "seq",
                    "token",
                    "lease_id",
                    "worker",
                    "attempt")
                : c.prepareStatement(
                    "INSERT INTO "
                        + schema
                        + ".ledger (resource, seq, token, lease_id, worker, attempt)"
                        + " VALUES (?, ?, ?, ?, ?, ?)")) {
          insert.setString(1, lease.resource());
          insert.setLong(2, seq + 1);
          insert.setLong(3, lease.token().value());
          insert.setString(4, lease.leaseId());
          insert.setInt(5, id);
          insert.setString(6, attempt);
          if (insert.executeUpdate() != 1) {
            throw new SQLException("ledger insert affected no row");
          }
        }
        try (PreparedStatement update =
            guarded
                ? GuardedStatements.update(c, schema + ".resources", "seq = ?", "resource = ?")
                : c.prepareStatement(
                    "UPDATE " + schema + ".resources SET seq = ? WHERE resource = ?")) {
          update.setLong(1, seq + 1);
          update.setString(2, lease.resource());
          if (update.executeUpdate() != 1) {
            throw new SQLException("resource update affected no row");
          }
        }
        c.commit();
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
