package dev.fencing.spring;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A loopback TCP proxy in front of PostgreSQL for one application instance. While held, what the
 * instance sends is kept in the proxy, not forwarded: a statement that already passed every check
 * in the JVM is on the wire, delayed (a network delay, or a pause of the sending process after its
 * checks), and reaches the server only at {@link #release()}.
 */
final class HoldingProxy implements AutoCloseable {

  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final CountDownLatch released = new CountDownLatch(1);
  private final CountDownLatch holding = new CountDownLatch(1);
  private volatile boolean held;
  private volatile boolean closed;

  HoldingProxy(String targetHost, int targetPort) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    try {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::acceptLoop, "pg-proxy-accept-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Returns {@code jdbcUrl} (a {@code jdbc:postgresql://host:port/...} URL) through this proxy. */
  String through(String jdbcUrl) {
    return jdbcUrl.replaceFirst(
        "^jdbc:postgresql://[^/]+/", "jdbc:postgresql://127.0.0.1:" + server.getLocalPort() + "/");
  }

  /** Returns a proxy in front of the server of {@code jdbcUrl}. */
  static HoldingProxy infront(String jdbcUrl) {
    Matcher m = Pattern.compile("^jdbc:postgresql://([^:/]+)(?::(\\d+))?/").matcher(jdbcUrl);
    if (!m.find()) {
      throw new IllegalArgumentException("not a jdbc:postgresql://host:port/ URL: " + jdbcUrl);
    }
    return new HoldingProxy(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)));
  }

  /** From now on, keeps what the clients send until {@link #release()} (once per proxy). */
  void hold() {
    if (released.getCount() > 0) {
      held = true;
    }
  }

  /** Waits until some client bytes are being held. */
  boolean awaitHeldBytes(long seconds) throws InterruptedException {
    return holding.await(seconds, TimeUnit.SECONDS);
  }

  /** Forwards what was held, and everything after it. */
  void release() {
    held = false;
    released.countDown();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        if (closed) {
          return;
        }
        continue;
      }
      Socket upstream = new Socket();
      try {
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 2000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(upstream);
        continue;
      }
      open.add(client);
      open.add(upstream);
      pump(client, upstream, true);
      pump(upstream, client, false);
    }
  }

  private void pump(Socket from, Socket to, boolean clientToServer) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16384];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (clientToServer && held) {
                    holding.countDown();
                    if (!released.await(60, TimeUnit.SECONDS)) {
                      throw new IOException("held for 60 s and never released");
                    }
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // connection closed
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "pg-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    release();
    try {
      server.close();
    } catch (IOException ignored) {
      // already closed
    }
    open.forEach(HoldingProxy::closeQuietly);
  }
}
