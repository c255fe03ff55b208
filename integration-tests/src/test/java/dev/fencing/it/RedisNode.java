package dev.fencing.it;

import dev.fencing.core.testing.RedisServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@code redis-server} process of the suite's own (nothing persisted), primary or replica. */
final class RedisNode implements AutoCloseable {

  private final int port;
  private final Path dir;
  private Process process;

  private RedisNode(int port, Path dir) {
    this.port = port;
    this.dir = dir;
  }

  /** Starts a server on a free port; a replica of {@code replicaOf} if that is positive. */
  static RedisNode start(Path parent, int replicaOf) {
    int port = RedisServers.freePort();
    try {
      RedisNode node = new RedisNode(port, Files.createTempDirectory(parent, "redis-" + port));
      node.startProcess(replicaOf);
      return node;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  int port() {
    return port;
  }

  long pid() {
    return process == null ? -1 : process.pid();
  }

  void startProcess(int replicaOf) {
    List<String> command = new ArrayList<>();
    command.add(RedisServers.redisServerBinary());
    command.addAll(
        List.of(
            "--port",
            Integer.toString(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            dir.toString(),
            "--enable-debug-command",
            "local"));
    if (replicaOf > 0) {
      command.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(replicaOf)));
    }
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!answers()) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException("redis-server did not start on port " + port);
      }
      ChaosRun.sleep(20);
    }
  }

  boolean answers() {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(500);
      socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] reply = new byte[7];
      int read = socket.getInputStream().read(reply);
      return read > 0 && reply[0] == '+';
    } catch (IOException e) {
      return false;
    }
  }

  void signal(String signal) {
    if (process != null && process.isAlive()) {
      ChaosRun.exec(List.of("kill", "-" + signal, Long.toString(process.pid())));
    }
  }

  /** SIGKILL: the data is gone. */
  void kill() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      process = null;
    }
  }

  /** Kills the server and starts it again, empty, on the same port. */
  void restartEmpty(int replicaOf) {
    kill();
    startProcess(replicaOf);
  }

  String cli(String... args) {
    List<String> command = new ArrayList<>();
    command.add(RedisServers.redisCliBinary());
    command.add("-p");
    command.add(Integer.toString(port));
    command.addAll(List.of(args));
    return ChaosRun.exec(command);
  }

  @Override
  public void close() {
    signal("CONT");
    kill();
    ChaosRun.deleteRecursively(dir);
  }
}
