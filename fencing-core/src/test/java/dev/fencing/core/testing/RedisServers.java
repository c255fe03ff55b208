package dev.fencing.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redis for tests: the shared local server, or private servers that tests may pause or kill. */
public final class RedisServers {

  /** How to start the shared server, printed when it is missing. */
  public static final String HOW_TO_START =
      "start it with: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save \"\""
          + " --appendonly no (or point -Dfencing.test.redis=redis://host:port at one)";

  private RedisServers() {}

  /** Returns the address of the shared Redis used by tests. */
  public static String sharedAddress() {
    return System.getProperty("fencing.test.redis", "redis://127.0.0.1:6379");
  }

  /**
   * Connects to the shared Redis, failing the test with instructions if it is not running.
   *
   * @return a new client; close it after the test
   */
  public static RedissonClient connectShared() {
    String address = sharedAddress();
    try {
      return connect(address);
    } catch (RuntimeException e) {
      throw new AssertionError("Redis is not reachable at " + address + "; " + HOW_TO_START, e);
    }
  }

  /** Connects a client with short timeouts to one server. */
  public static RedissonClient connect(String address) {
    Config config = new Config();
    config
        .useSingleServer()
        .setAddress(address)
        .setTimeout(1000)
        .setConnectTimeout(1000)
        .setRetryAttempts(1)
        .setConnectionMinimumIdleSize(2)
        .setConnectionPoolSize(16)
        .setSubscriptionConnectionMinimumIdleSize(1);
    return Redisson.create(config);
  }

  /** Returns a port that was free a moment ago. */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Returns the path of the {@code redis-server} binary, failing with instructions if absent. */
  public static String redisServerBinary() {
    return binary("redis-server");
  }

  /** Returns the path of the {@code redis-cli} binary, failing with instructions if absent. */
  public static String redisCliBinary() {
    return binary("redis-cli");
  }

  private static String binary(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
      java.io.File file = new java.io.File(dir, name);
      if (file.canExecute()) {
        return file.getAbsolutePath();
      }
    }
    throw new AssertionError(
        name + " is not on the PATH; install it with: apt-get install -y redis-server");
  }

  static boolean answers(int port) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(500);
      socket
          .getOutputStream()
          .write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      byte[] reply = new byte[7];
      int read = socket.getInputStream().read(reply);
      return read > 0 && reply[0] == '+';
    } catch (IOException e) {
      return false;
    }
  }
}
