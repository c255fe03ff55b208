package dev.fencing.examples;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import redis.embedded.RedisServer;

/**
 * A throw-away Redis server on a free port, for running the example with no configuration: the
 * {@code redis-server} found on {@code PATH} if there is one (newer, and no binary to unpack), else
 * the one bundled in the embedded-redis artifact.
 */
public final class EmbeddedRedisServer implements AutoCloseable {

  /** Which binary to run. */
  public enum Source {
    /** {@code redis-server} from PATH if present, else {@link #BUNDLED}. */
    PATH_OR_BUNDLED,
    /** The binary bundled in the embedded-redis artifact. */
    BUNDLED
  }

  private final int port;
  private final String description;
  private final Process process;
  private final RedisServer bundled;
  private final Path dir;
  private final Thread shutdownHook;

  private EmbeddedRedisServer(
      int port, String description, Process process, RedisServer bundled, Path dir) {
    this.port = port;
    this.description = description;
    this.process = process;
    this.bundled = bundled;
    this.dir = dir;
    this.shutdownHook = new Thread(this::stop, "embedded-redis-stop");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
  }

  /** Starts a server; it is stopped by {@link #close} or, failing that, at JVM exit. */
  public static EmbeddedRedisServer start(Source source) throws ServerException {
    Optional<Path> onPath = source == Source.PATH_OR_BUNDLED ? findOnPath() : Optional.empty();
    try {
      return onPath.isPresent() ? startFromPath(onPath.get()) : startBundled();
    } catch (IOException | RuntimeException e) {
      throw new ServerException(
          "could not start embedded Redis: " + ServerException.firstLine(e), e);
    }
  }

  /** {@code redis-server} on {@code PATH}, if any. */
  public static Optional<Path> findOnPath() {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, "redis-server");
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  private static EmbeddedRedisServer startFromPath(Path binary) throws IOException {
    IOException last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      int port = freePort();
      Path dir = Files.createTempDirectory("fencing-redis-");
      Path logFile = dir.resolve("redis.log");
      Process p =
          new ProcessBuilder(
                  List.of(
                      binary.toString(),
                      "--port",
                      Integer.toString(port),
                      "--bind",
                      "127.0.0.1",
                      "--save",
                      "",
                      "--appendonly",
                      "no",
                      "--daemonize",
                      "no",
                      "--dir",
                      dir.toString()))
              .redirectErrorStream(true)
              .redirectOutput(logFile.toFile())
              .start();
      if (waitForPing(port, p)) {
        return new EmbeddedRedisServer(port, binary + " on port " + port, p, null, dir);
      }
      p.destroyForcibly();
      String log = Files.exists(logFile) ? Files.readString(logFile).trim() : "";
      last =
          new IOException(
              binary
                  + " did not answer PING on port "
                  + port
                  + (log.isEmpty() ? "" : ": " + lastLine(log)));
      deleteQuietly(dir);
    }
    throw last;
  }

  private static EmbeddedRedisServer startBundled() throws IOException {
    int port = freePort();
    RedisServer server =
        RedisServer.newRedisServer()
            .port(port)
            .bind("127.0.0.1")
            .setting("save \"\"")
            .setting("appendonly no")
            .build();
    server.start();
    if (!waitForPing(port, null)) {
      server.stop();
      throw new IOException("bundled redis-server did not answer PING on port " + port);
    }
    return new EmbeddedRedisServer(
        port, "bundled redis-server on port " + port, null, server, null);
  }

  private static boolean waitForPing(int port, Process process) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      if (process != null && !process.isAlive()) {
        return false;
      }
      if (ping("127.0.0.1", port, 200)) {
        return true;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  /** True if a Redis server answers on host:port (PING answered, or answered with NOAUTH). */
  static boolean ping(String host, int port, int timeoutMillis) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), timeoutMillis);
      s.setSoTimeout(timeoutMillis);
      OutputStream out = s.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[64];
      int n = in.read(buf);
      if (n <= 0) {
        return false;
      }
      String reply = new String(buf, 0, n, StandardCharsets.US_ASCII);
      return reply.startsWith("+PONG") || reply.startsWith("-NOAUTH");
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  private static String lastLine(String text) {
    int nl = text.lastIndexOf('\n');
    return nl >= 0 ? text.substring(nl + 1) : text;
  }

  public int port() {
    return port;
  }

  public String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** What runs, for the user. */
  public String description() {
    return description;
  }

  @Override
  public void close() {
    stop();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs (or ran) anyway
    }
  }

  private synchronized void stop() {
    if (process != null && process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    if (bundled != null) {
      try {
        bundled.stop();
      } catch (IOException | RuntimeException e) {
        // best effort at exit
      }
    }
    if (dir != null) {
      deleteQuietly(dir);
    }
  }

  private static void deleteQuietly(Path dir) {
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException | RuntimeException e) {
      // a temp directory left behind is harmless
    }
  }
}
