package dev.fencing.it;

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

/**
 * A loopback TCP proxy in front of the current Redis primary. Workers talk to the proxy's port; the
 * nemesis re-points it at a promoted replica (cutting every open connection, as a fail-over does)
 * or stalls it (nothing is forwarded for a while: a network delay without netem).
 */
final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile int targetPort;
  private volatile long stalledUntilNanos = System.nanoTime();
  private volatile boolean closed;

  TcpProxy(int targetPort) {
    this.targetPort = targetPort;
    try {
      server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread acceptor = new Thread(this::acceptLoop, "proxy-accept-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Sends new connections to {@code port} and cuts the open ones. */
  void retarget(int port) {
    targetPort = port;
    cutAll();
  }

  /** Closes every open connection (clients reconnect through the proxy). */
  void cutAll() {
    for (Socket s : open) {
      closeQuietly(s);
    }
  }

  /** Forwards nothing, in either direction, for {@code millis}. */
  void stall(long millis) {
    stalledUntilNanos = System.nanoTime() + millis * 1_000_000L;
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
        upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 1000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(upstream);
        continue;
      }
      open.add(client);
      open.add(upstream);
      pump(client, upstream);
      pump(upstream, client);
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16384];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  long wait;
                  while ((wait = stalledUntilNanos - System.nanoTime()) > 0) {
                    Thread.sleep(wait / 1_000_000L + 1);
                  }
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // connection cut
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "proxy-pump");
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
    try {
      server.close();
    } catch (IOException ignored) {
      // already closed
    }
    cutAll();
  }
}
