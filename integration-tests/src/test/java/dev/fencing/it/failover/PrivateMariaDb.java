package dev.fencing.it.failover;

import dev.fencing.core.testing.RedisServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private MariaDB server of the suite's own, for crash tests: a data directory made by {@code
 * mariadb-install-db}, {@code mariadbd} on a free port (as the {@code mysql} OS user when the JVM
 * runs as root), no binary log, no grant tables (every connection is root). {@link #crash()} is a
 * {@code SIGKILL} by PID; {@link #start()} starts it again on the same data directory, which runs
 * InnoDB's crash recovery.
 */
final class PrivateMariaDb implements AutoCloseable {

  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

  private final Path root;
  private final Path data;
  private final int port;
  private final boolean asRoot;
  private Process process;

  private PrivateMariaDb(Path root, boolean asRoot) {
    this.root = root;
    this.data = root.resolve("data");
    this.port = RedisServers.freePort();
    this.asRoot = asRoot;
  }

  /** Creates the data directory and starts the server. */
  static PrivateMariaDb create() {
    boolean asRoot = "root".equals(System.getProperty("user.name"));
    Path root;
    try {
      root = Files.createTempDirectory("fencing-mariadb-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    PrivateMariaDb server = new PrivateMariaDb(root, asRoot);
    try {
      List<String> install =
          new ArrayList<>(
              List.of(
                  "mariadb-install-db",
                  "--no-defaults",
                  "--datadir=" + server.data,
                  "--auth-root-authentication-method=normal",
                  "--skip-test-db"));
      if (asRoot) {
        PgReplicaPair.exec(List.of("chown", "mysql:mysql", root.toString()), true);
        install.add("--user=mysql");
      }
      PgReplicaPair.exec(install, true);
      server.start();
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw new IllegalStateException(
          "could not start a private MariaDB (needs mariadb-install-db and mariadbd on the PATH:"
              + " apt-get install -y mariadb-server; the mysql OS user when run as root); files in "
              + root
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Starts {@code mariadbd} on the data directory and waits until it takes connections. */
  void start() {
    List<String> command =
        new ArrayList<>(
            List.of(
                "mariadbd",
                "--no-defaults",
                "--datadir=" + data,
                "--port=" + port,
                "--bind-address=127.0.0.1",
                "--socket=" + root.resolve("mysqld.sock"),
                "--pid-file=" + root.resolve("mysqld.pid"),
                "--skip-grant-tables",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=1",
                // with 0, InnoDB writes its log only every this many seconds: a crash in between
                // loses every commit since
                "--innodb-flush-log-at-timeout=2700"));
    if (asRoot) {
      command.add("--user=mysql");
    }
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(
                  ProcessBuilder.Redirect.appendTo(root.resolve("mariadbd.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (true) {
      try (Connection c = DriverManager.getConnection(url(""))) {
        return;
      } catch (SQLException notYet) {
        if (!process.isAlive() || System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "mariadbd did not start on port " + port + "; see " + root.resolve("mariadbd.log"),
              notYet);
        }
        PgReplicaPair.sleep(50);
      }
    }
  }

  /** The JDBC URL of {@code database} (blank: none) on this server. */
  String url(String database) {
    return "jdbc:mariadb://127.0.0.1:" + port + "/" + database + "?user=root&connectTimeout=2000";
  }

  /** {@code SIGKILL} of {@code mariadbd} by its PID: what InnoDB had not written is lost. */
  void crash() {
    Process p = process;
    if (p == null) {
      return;
    }
    PgReplicaPair.exec(List.of("kill", "-KILL", Long.toString(p.pid())), false);
    try {
      p.waitFor(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** Stops the server by PID and deletes its files. */
  @Override
  public void close() {
    crash();
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // the temporary directory stays behind
    }
  }
}
