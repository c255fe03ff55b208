package dev.fencing.it.failover;

import dev.fencing.core.testing.RedisServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PostgreSQL primary and one hot standby of the suite's own, on free ports, for fail-over
 * tests: built with {@code initdb} and {@code pg_basebackup -R}, promoted with {@code pg_ctl
 * promote}, always stopped by the postmaster's PID. The binaries come from {@code pg_config
 * --bindir}; when the JVM runs as root, every server command runs as the {@code postgres} OS user.
 *
 * <p>{@code fsync} is off on both: no test here crashes the operating system, and what the tests
 * look at is which WAL reached the standby (WAL shipping and the synchronous-replication wait do
 * not depend on {@code fsync}). The primary is "lost" by stopping it with {@code -m immediate} and
 * never starting it again.
 */
public final class PgReplicaPair implements AutoCloseable {

  /** The standby's {@code application_name} (its {@code cluster_name}). */
  static final String STANDBY_NAME = "standby1";

  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

  private final Path root;
  private final String bin;
  private final boolean asRoot;
  private Server primary;
  private Server standby;

  /** One server of the pair. */
  final class Server {
    final String name;
    final int port;
    final Path data;

    Server(String name, int port) {
      this.name = name;
      this.port = port;
      this.data = root.resolve(name);
    }

    String jdbcUrl() {
      return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    Connection connect() throws SQLException {
      return DriverManager.getConnection(jdbcUrl());
    }

    void start() {
      pg(
          "pg_ctl",
          "-D",
          data.toString(),
          "-l",
          root.resolve(name + ".log").toString(),
          "-w",
          "-t",
          "60",
          "start");
    }

    /** Stops the server by its postmaster's PID ({@code fast}: clean; {@code immediate}: lost). */
    void stop(boolean immediate) {
      long pid = postmasterPid();
      if (pid <= 0) {
        return;
      }
      exec(List.of("kill", immediate ? "-QUIT" : "-INT", Long.toString(pid)), false);
      long deadline = System.nanoTime() + WAIT_NANOS;
      while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        if (System.nanoTime() - deadline > 0) {
          exec(List.of("kill", "-KILL", Long.toString(pid)), false);
          break;
        }
        sleep(20);
      }
      waitGone(pid);
    }

    boolean running() {
      long pid = postmasterPid();
      return pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    long postmasterPid() {
      Path file = data.resolve("postmaster.pid");
      try {
        if (!Files.exists(file)) {
          return -1;
        }
        String first = Files.readAllLines(file, StandardCharsets.US_ASCII).get(0).trim();
        return Long.parseLong(first);
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    /** Runs one statement in auto-commit mode. */
    void execute(String sql) throws SQLException {
      try (Connection c = connect();
          Statement s = c.createStatement()) {
        s.execute(sql);
      }
    }

    /** Runs one query and returns its first column of the first row. */
    String query(String sql) throws SQLException {
      try (Connection c = connect();
          Statement s = c.createStatement();
          ResultSet r = s.executeQuery(sql)) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  private PgReplicaPair(Path root, String bin, boolean asRoot) {
    this.root = root;
    this.bin = bin;
    this.asRoot = asRoot;
    this.primary = new Server("primary", RedisServers.freePort());
    this.standby = new Server("standby", RedisServers.freePort());
  }

  /**
   * Starts a primary and a streaming hot standby of it, the standby caught up.
   *
   * @param synchronous whether the primary names the standby in {@code synchronous_standby_names}
   */
  public static PgReplicaPair start(boolean synchronous) {
    String bin = exec(List.of("pg_config", "--bindir"), true).trim();
    boolean asRoot = "root".equals(System.getProperty("user.name"));
    Path root;
    try {
      root = Files.createTempDirectory("fencing-failover-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    PgReplicaPair pair = new PgReplicaPair(root, bin, asRoot);
    try {
      pair.build(synchronous);
      return pair;
    } catch (RuntimeException | SQLException e) {
      pair.close();
      throw new IllegalStateException(
          "could not start a private PostgreSQL primary and standby (needs initdb, pg_ctl and"
              + " pg_basebackup from pg_config --bindir, and the postgres OS user when run as"
              + " root); logs in "
              + root
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private void build(boolean synchronous) throws SQLException {
    if (asRoot) {
      exec(List.of("chown", "postgres:postgres", root.toString()), true);
    }
    pg(
        "initdb",
        "-D",
        primary.data.toString(),
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
        "--no-instructions");
    appendConf(
        primary,
        "port = "
            + primary.port
            + "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '"
            + root
            + "'\nshared_buffers = 16MB\nmax_connections = 40\nfsync = off\n"
            + "wal_level = replica\nmax_wal_senders = 4\nwal_sender_timeout = 5s\n"
            + "wal_receiver_status_interval = 1s\nhot_standby = on\n"
            + (synchronous ? "synchronous_standby_names = '" + STANDBY_NAME + "'\n" : ""));
    primary.start();
    pg(
        "pg_basebackup",
        "-D",
        standby.data.toString(),
        "-h",
        "127.0.0.1",
        "-p",
        Integer.toString(primary.port),
        "-U",
        "postgres",
        "-R",
        "-X",
        "stream",
        "--no-sync");
    appendConf(
        standby,
        "port = "
            + standby.port
            + "\ncluster_name = '"
            + STANDBY_NAME
            + "'\nsynchronous_standby_names = ''\n");
    standby.start();
    awaitStreaming();
  }

  Server primary() {
    return primary;
  }

  Server standby() {
    return standby;
  }

  /** A pgjdbc multi-host URL over both servers that always picks the current primary. */
  public String multiHostUrl() {
    return "jdbc:postgresql://127.0.0.1:"
        + primary.port
        + ",127.0.0.1:"
        + standby.port
        + "/postgres?user=postgres&targetServerType=primary&connectTimeout=5";
  }

  /** Waits until the standby streams from the primary and has replayed all it sent. */
  public void awaitStreaming() throws SQLException {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (true) {
      String state =
          primary.query(
              "SELECT state || ':' || (replay_lsn >= pg_current_wal_lsn())::text"
                  + " FROM pg_stat_replication WHERE application_name = '"
                  + STANDBY_NAME
                  + "'");
      if ("streaming:true".equals(state)) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the standby did not catch up: " + state);
      }
      sleep(20);
    }
  }

  /**
   * Cuts the WAL shipping: stops the standby (clean), so nothing the primary commits from now on
   * reaches it.
   */
  public void stopShipping() {
    standby.stop(false);
  }

  /**
   * The fail-over: the primary is lost (stopped immediately, never started again), the standby is
   * started again if it was stopped (it keeps only the WAL it had received) and promoted.
   */
  public void failOver() throws SQLException {
    primary.stop(true);
    if (!standby.running()) {
      standby.start();
    }
    pg("pg_ctl", "-D", standby.data.toString(), "-w", "-t", "60", "promote");
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!"f".equals(standby.query("SELECT pg_is_in_recovery()"))
        && !"false".equals(standby.query("SELECT pg_is_in_recovery()::text"))) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the standby was not promoted");
      }
      sleep(20);
    }
  }

  /**
   * After {@link #failOver()}: the promoted standby is the primary from now on, and the lost
   * primary's server is built again, empty, as its streaming standby ({@code pg_basebackup -R} on
   * the lost primary's port), so that the pair can fail over again.
   */
  public void rebuildStandby() throws SQLException {
    Server promoted = standby;
    Server lost = primary;
    lost.stop(true);
    try (Stream<Path> paths = Files.walk(lost.data)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    primary = promoted;
    standby = lost;
    pg(
        "pg_basebackup",
        "-D",
        lost.data.toString(),
        "-h",
        "127.0.0.1",
        "-p",
        Integer.toString(promoted.port),
        "-U",
        "postgres",
        "-R",
        "-X",
        "stream",
        "--no-sync");
    appendConf(
        lost,
        "port = "
            + lost.port
            + "\ncluster_name = '"
            + STANDBY_NAME
            + "'\nsynchronous_standby_names = ''\n");
    lost.start();
    awaitStreaming();
  }

  /** Stops both servers by PID (whatever state they are in) and deletes their directories. */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (Server server : List.of(standby, primary)) {
      try {
        server.stop(true);
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // the temporary directory stays behind
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void appendConf(Server server, String lines) {
    Path conf = server.data.resolve("postgresql.conf");
    try {
      Files.writeString(
          conf,
          Files.readString(conf, StandardCharsets.UTF_8) + "\n" + lines,
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void pg(String program, String... arguments) {
    List<String> command = new ArrayList<>();
    if (asRoot) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(Path.of(bin, program).toString());
    command.addAll(List.of(arguments));
    exec(command, true);
  }

  private static void waitGone(long pid) {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
        && System.nanoTime() - deadline < 0) {
      sleep(20);
    }
  }

  /** Runs a command (bounded), returns its output; fails on a non-zero exit if {@code check}. */
  static String exec(List<String> command, boolean check) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      byte[] output = process.getInputStream().readAllBytes();
      if (!process.waitFor(90, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("timed out: " + command);
      }
      String text = new String(output, StandardCharsets.UTF_8);
      if (check && process.exitValue() != 0) {
        throw new IllegalStateException(command + " exited " + process.exitValue() + ": " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
