package dev.fencing.jdbc;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A PostgreSQL client at the wire-protocol level (simple queries, trust authentication) that can
 * stop reading: after {@link #sendAndStopReading}, the server fills the socket buffers and its
 * backend blocks in {@code ClientWrite}, active, inside whatever transaction the client opened.
 * That is what a real client frozen in the middle of a result set (a paused JVM, a stopped process)
 * looks like to the server, without a second process.
 */
final class FrozenPgClient implements AutoCloseable {

  private static final int PROTOCOL_3_0 = 196608;

  private final Socket socket;
  private final DataOutputStream out;
  private final DataInputStream in;
  private final int backendPid;

  /** Connects to the server of a {@code jdbc:postgresql://host:port/db?user=...} URL. */
  FrozenPgClient(String jdbcUrl) {
    URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
    String database = uri.getPath().substring(1);
    String user = "postgres";
    if (uri.getQuery() != null) {
      for (String parameter : uri.getQuery().split("&")) {
        if (parameter.startsWith("user=")) {
          user = parameter.substring("user=".length());
        }
      }
    }
    try {
      socket = new Socket();
      socket.setReceiveBufferSize(4096);
      socket.connect(
          new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort()), 5000);
      out = new DataOutputStream(socket.getOutputStream());
      in = new DataInputStream(socket.getInputStream());
      byte[] parameters =
          ("user\0" + user + "\0database\0" + database + "\0\0").getBytes(StandardCharsets.UTF_8);
      out.writeInt(8 + parameters.length);
      out.writeInt(PROTOCOL_3_0);
      out.write(parameters);
      out.flush();
      backendPid = readUntilReady(null);
    } catch (IOException e) {
      throw new UncheckedIOException("raw connection to " + jdbcUrl + " failed", e);
    }
  }

  /** The process id of this client's backend. */
  int backendPid() {
    return backendPid;
  }

  /** Runs one simple query and reads its whole answer; fails on a server error. */
  void query(String sql) {
    try {
      send(sql);
      readUntilReady(sql);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Sends one simple query and never reads its answer. */
  void sendAndStopReading(String sql) {
    try {
      send(sql);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void send(String sql) throws IOException {
    byte[] text = (sql + "\0").getBytes(StandardCharsets.UTF_8);
    out.writeByte('Q');
    out.writeInt(4 + text.length);
    out.write(text);
    out.flush();
  }

  /** Reads messages up to ReadyForQuery; returns the backend pid when it came by. */
  private int readUntilReady(String sql) throws IOException {
    int pid = -1;
    List<String> errors = new ArrayList<>();
    while (true) {
      byte type = in.readByte();
      byte[] body = new byte[in.readInt() - 4];
      in.readFully(body);
      switch (type) {
        case 'R' -> {
          int code = ((body[0] & 0xff) << 24) | ((body[1] & 0xff) << 16) | ((body[2] & 0xff) << 8);
          code |= body[3] & 0xff;
          if (code != 0) {
            throw new IllegalStateException(
                "the raw test client only speaks trust authentication; the server asked for"
                    + " method "
                    + code);
          }
        }
        case 'K' ->
            pid =
                ((body[0] & 0xff) << 24)
                    | ((body[1] & 0xff) << 16)
                    | ((body[2] & 0xff) << 8)
                    | (body[3] & 0xff);
        case 'E' -> errors.add(new String(body, StandardCharsets.UTF_8).replace('\0', ' '));
        case 'Z' -> {
          if (!errors.isEmpty()) {
            throw new IllegalStateException(
                (sql == null ? "connecting" : sql) + " failed: " + errors);
          }
          return pid;
        }
        default -> {
          // row descriptions, data rows, notices, parameter statuses: not needed
        }
      }
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
