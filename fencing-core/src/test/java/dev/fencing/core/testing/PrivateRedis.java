package dev.fencing.core.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RedissonClient;

/**
 * A {@code redis-server} of a test's own, on a free loopback port, with nothing persisted. Tests
 * may pause ({@code SIGSTOP}), resume, stop, restart or flush it without disturbing other tests.
 */
public final class PrivateRedis implements AutoCloseable {

  private final int port;
  private final List<String> extraArgs;
  private final Path dir;
  private Process process;

  private PrivateRedis(int port, List<String> extraArgs) {
    this.port = port;
    this.extraArgs = List.copyOf(extraArgs);
    try {
      this.dir = Files.createTempDirectory("fencing-redis-" + port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts a server on a free port. */
  public static PrivateRedis start(String... extraArgs) {
    PrivateRedis redis = new PrivateRedis(RedisServers.freePort(), List.of(extraArgs));
    redis.startProcess();
    return redis;
  }

  /** Returns the port. */
  public int port() {
    return port;
  }

  /** Returns the {@code redis://} address. */
  public String address() {
    return "redis://127.0.0.1:" + port;
  }

  /** Returns a new client connected to this server; the caller closes it. */
  public RedissonClient connect() {
    return RedisServers.connect(address());
  }

  /** Freezes the server with {@code SIGSTOP}: connections stay open, nothing is answered. */
  public void pause() {
    signal("STOP");
  }

  /** Resumes a paused server with {@code SIGCONT}. */
  public void resume() {
    signal("CONT");
  }

  /** Kills the server (SIGKILL); its data is gone since nothing is persisted. */
  public void kill() {
    if (process != null) {
      process.destroyForcibly();
      waitFor(process);
      process = null;
    }
  }

  /** Kills the server and starts it again, empty, on the same port. */
  public void restartEmpty() {
    kill();
    startProcess();
  }

  /** Runs a {@code redis-cli} command against this server and returns its output. */
  public String cli(String... args) {
    List<String> command = new ArrayList<>();
    command.add(RedisServers.redisCliBinary());
    command.add("-p");
    command.add(Integer.toString(port));
    command.addAll(List.of(args));
    return run(command);
  }

  @Override
  public void close() {
    if (process != null) {
      signal("CONT");
    }
    kill();
    deleteRecursively(dir.toFile());
  }

  private void startProcess() {
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
            dir.toString()));
    command.addAll(extraArgs);
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("redis.log").toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!RedisServers.answers(port)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        throw new AssertionError("redis-server did not start on port " + port + ": " + log());
      }
      sleep(20);
    }
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  private void signal(String signal) {
    if (process == null) {
      throw new IllegalStateException("redis-server on port " + port + " is not running");
    }
    run(List.of("kill", "-" + signal, Long.toString(process.pid())));
  }

  static String run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(command + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static void waitFor(Process p) {
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  static void deleteRecursively(File file) {
    File[] children = file.listFiles();
    if (children != null) {
      for (File child : children) {
        deleteRecursively(child);
      }
    }
    file.delete();
  }
}
