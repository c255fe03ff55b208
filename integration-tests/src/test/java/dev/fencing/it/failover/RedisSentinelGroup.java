package dev.fencing.it.failover;

import dev.fencing.core.testing.RedisServers;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redis with Sentinel, of the suite's own: a {@code redis-server} master, one replica of it and one
 * {@code redis-server --sentinel} watching them (quorum 1, a master is down after 1 s), on free
 * ports, nothing persisted. Every process is paused, resumed and stopped by its PID. Clients reach
 * the current master through the Sentinel ({@link #connectViaSentinel}), as an application
 * configured for Sentinel does, or one server directly ({@link #connectDirectly}).
 */
final class RedisSentinelGroup implements AutoCloseable {

  static final String MASTER_NAME = "fencing-it";

  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final Path root;
  private final Node first;
  private final Node second;
  private final Node sentinel;

  /** One process of the group. */
  static final class Node {
    final String name;
    final int port;
    private Process process;

    Node(String name, int port) {
      this.name = name;
      this.port = port;
    }

    String address() {
      return "redis://127.0.0.1:" + port;
    }

    private void start(Path root, List<String> arguments) {
      List<String> command = new ArrayList<>();
      command.add(RedisServers.redisServerBinary());
      command.addAll(arguments);
      try {
        process =
            new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(
                    ProcessBuilder.Redirect.appendTo(root.resolve(name + ".log").toFile()))
                .start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      long deadline = System.nanoTime() + WAIT_NANOS;
      while (!cliAnswers()) {
        if (!process.isAlive() || System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              name + " (redis-server) did not start on port " + port + "; see " + root);
        }
        PgReplicaPair.sleep(20);
      }
    }

    private boolean cliAnswers() {
      try {
        return cli("PING").trim().equals("PONG");
      } catch (RuntimeException e) {
        return false;
      }
    }

    /** Runs {@code redis-cli} against this process and returns its output. */
    String cli(String... arguments) {
      List<String> command = new ArrayList<>();
      command.addAll(List.of(RedisServers.redisCliBinary(), "-h", "127.0.0.1", "-p"));
      command.add(Integer.toString(port));
      command.addAll(List.of(arguments));
      return PgReplicaPair.exec(command, true);
    }

    /** {@code SIGSTOP}: the process takes nothing from the network until {@link #resume}. */
    void pause() {
      signal("STOP");
    }

    void resume() {
      signal("CONT");
    }

    /** {@code SIGKILL} by PID: what it held in memory is gone. */
    void kill() {
      Process p = process;
      if (p == null) {
        return;
      }
      signal("CONT");
      PgReplicaPair.exec(List.of("kill", "-KILL", Long.toString(p.pid())), false);
      try {
        p.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      process = null;
    }

    private void signal(String signal) {
      Process p = process;
      if (p != null && p.isAlive()) {
        PgReplicaPair.exec(List.of("kill", "-" + signal, Long.toString(p.pid())), true);
      }
    }
  }

  private RedisSentinelGroup(Path root) {
    this.root = root;
    this.first = new Node("redis-a", RedisServers.freePort());
    this.second = new Node("redis-b", RedisServers.freePort());
    this.sentinel = new Node("sentinel", RedisServers.freePort());
  }

  /** Starts the master, its replica (caught up) and the Sentinel that watches them. */
  static RedisSentinelGroup start() {
    Path root;
    try {
      root = Files.createTempDirectory("fencing-sentinel-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisSentinelGroup group = new RedisSentinelGroup(root);
    try {
      group.build();
      return group;
    } catch (RuntimeException | IOException e) {
      group.close();
      throw new IllegalStateException(
          "could not start a private Redis master, replica and Sentinel (needs redis-server and"
              + " redis-cli on the PATH: apt-get install -y redis-server): "
              + e.getMessage(),
          e);
    }
  }

  private void build() throws IOException {
    first.start(root, server(first));
    List<String> replica = new ArrayList<>(server(second));
    replica.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(first.port)));
    second.start(root, replica);
    awaitReplicaCaughtUp(first, second);
    Path conf = root.resolve("sentinel.conf");
    Files.writeString(
        conf,
        "port "
            + sentinel.port
            + "\nbind 127.0.0.1\ndir "
            + root
            + "\nsentinel monitor "
            + MASTER_NAME
            + " 127.0.0.1 "
            + first.port
            + " 1\nsentinel down-after-milliseconds "
            + MASTER_NAME
            + " 1000\nsentinel failover-timeout "
            + MASTER_NAME
            + " 10000\n",
        StandardCharsets.UTF_8);
    sentinel.start(root, List.of(conf.toString(), "--sentinel"));
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!sentinel
        .cli("SENTINEL", "REPLICAS", MASTER_NAME)
        .contains(Integer.toString(second.port))) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the Sentinel never saw the replica");
      }
      PgReplicaPair.sleep(50);
    }
  }

  private List<String> server(Node node) {
    Path dir = root.resolve(node.name);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return List.of(
        "--port",
        Integer.toString(node.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir.toString());
  }

  /** The server the Sentinel currently names as master. */
  Node master() {
    String reply = sentinel.cli("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
    return reply.contains(Integer.toString(first.port))
            && !reply.contains(Integer.toString(second.port))
        ? first
        : second;
  }

  /** The server that is not {@link #master()}. */
  Node replica() {
    return master() == first ? second : first;
  }

  Node sentinel() {
    return sentinel;
  }

  /** Waits until the replica has every write its master sent. */
  static void awaitReplicaCaughtUp(Node master, Node replica) {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (true) {
      String masterOffset = field(master.cli("INFO", "replication"), "master_repl_offset");
      String replicaInfo = replica.cli("INFO", "replication");
      if ("up".equals(field(replicaInfo, "master_link_status"))
          && masterOffset != null
          && masterOffset.equals(field(replicaInfo, "slave_repl_offset"))) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the replica did not catch up: " + replicaInfo);
      }
      PgReplicaPair.sleep(20);
    }
  }

  private static String field(String info, String name) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1).trim();
      }
    }
    return null;
  }

  /**
   * The fail-over the Sentinel makes to a lagging replica: the replica is paused and its link to
   * the master cut (it takes no more of the stream) while {@code whileLagging} writes to the
   * master, then the master is killed, the replica resumed, and the Sentinel promotes it. Returns
   * once the Sentinel names the promoted replica and it takes writes.
   */
  Node failOverToLaggingReplica(Runnable whileLagging) {
    Node oldMaster = master();
    Node promoted = replica();
    promoted.pause();
    // A paused process still receives into its socket buffer and would apply it on resuming: the
    // master drops the replica's link, so what it writes from now on goes nowhere.
    oldMaster.cli("CLIENT", "KILL", "TYPE", "replica");
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (!"0".equals(field(oldMaster.cli("INFO", "replication"), "connected_slaves"))) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("the master kept its replica's link");
      }
      PgReplicaPair.sleep(20);
    }
    try {
      whileLagging.run();
    } finally {
      oldMaster.kill();
      promoted.resume();
    }
    awaitMaster(promoted);
    return promoted;
  }

  /** Waits until the Sentinel names {@code node} as master and {@code node} says it is one. */
  void awaitMaster(Node node) {
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (master() != node || !node.cli("ROLE").startsWith("master")) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(
            "the Sentinel did not promote " + node.name + "; see the logs in " + root);
      }
      PgReplicaPair.sleep(50);
    }
  }

  /** A Redisson client that finds the master through the Sentinel, as an application does. */
  RedissonClient connectViaSentinel() {
    Config config = new Config();
    config
        .useSentinelServers()
        .setMasterName(MASTER_NAME)
        .addSentinelAddress(sentinel.address())
        .setCheckSentinelsList(false)
        .setScanInterval(200)
        .setTimeout(1000)
        .setConnectTimeout(1000)
        .setRetryAttempts(3);
    return Redisson.create(config);
  }

  /** A Redisson client of one server, whatever its role. */
  static RedissonClient connectDirectly(Node node) {
    return RedisServers.connect(node.address());
  }

  /** Stops every process by PID and deletes the group's directory. */
  @Override
  public void close() {
    for (Node node : List.of(sentinel, second, first)) {
      node.kill();
    }
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // the temporary directory stays behind
    }
  }
}
