package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease examples of README.md, as written there: each block between {@code // README:} markers
 * below must appear verbatim in a {@code java} block of the README, and the core one runs.
 */
class ReadmeExamplesTest {

  private static final Logger log = LoggerFactory.getLogger(ReadmeExamplesTest.class);
  private static final Path README = Path.of("..", "README.md");
  private static final Path SOURCE =
      Path.of("src", "test", "java", "dev", "fencing", "jdbc", "ReadmeExamplesTest.java");

  private final List<FencingToken> jobsRun = new ArrayList<>();

  @Test
  void theLeaseExamplesInTheReadmeAreTheOnesCompiledHere() throws IOException {
    String readme = Files.readString(README);
    List<String> snippets = snippets(Files.readString(SOURCE));
    assertThat(snippets).hasSize(2);
    for (String snippet : snippets) {
      assertThat(readme).as("README.md contains, verbatim:%n%s", snippet).contains(snippet);
    }
  }

  @Test
  void theCoreExampleRuns() {
    RedissonClient redisson = RedisServers.connectShared();
    try {
      acquireALease(redisson);
    } finally {
      redisson.shutdown();
    }
    assertThat(jobsRun).hasSize(1);
  }

  private void acquireALease(RedissonClient redisson) {
    // README:begin
    try (RedisLeaseManager leases = RedisLeaseManager.create(redisson, LeaseOptions.defaults())) {
      LeaseRequest request =
          LeaseRequest.forLeaseTime(Duration.ofSeconds(30)) // the lock's TTL, renewed every 10 s
              .withMaxWait(Duration.ofSeconds(10)); // how long to wait for the current holder
      try (Lease lease = leases.acquire("billing-nightly", request)) {
        lease.onLoss((lost, reason) -> log.warn("lost {}: {}", lost, reason));
        runJob(lease.token()); // FencingToken, strictly increasing
      } // release: compare-and-delete, never a successor's lock
    } // close: stops the heartbeat; leases still held are reported lost
    // README:end
  }

  @SuppressWarnings("unused") // compiled, not run: it needs the default fence schema
  private static void fenceTheWrites(
      RedissonClient redisson, DataSource hikariDataSource, BillingDao billingDao)
      throws Exception {
    // README:begin
    FencedDataSource db = FencedDataSource.wrap(hikariDataSource, FenceOptions.defaults());
    try (LeaseManager leases =
        new FencedLeaseManager(
            RedisLeaseManager.create(redisson, LeaseOptions.defaults()), db.fence())) {
      LeaseRequest request =
          LeaseRequest.forLeaseTime(Duration.ofMinutes(1)).withMaxWait(Duration.ofSeconds(10));
      try (Lease lease = leases.acquire("billing-nightly", request)) { // registered in the fence
        Fencing.run(lease, () -> billingDao.chargeAll()); // your DAO, taking connections from db
      }
    }
    // README:end
  }

  private void runJob(FencingToken token) {
    jobsRun.add(token);
  }

  /** A DAO as in the README. */
  interface BillingDao {
    void chargeAll() throws Exception;
  }

  private static List<String> snippets(String source) {
    List<String> snippets = new ArrayList<>();
    Matcher m =
        Pattern.compile("\\n( *)// README:begin\\n(.*?)\\n *// README:end", Pattern.DOTALL)
            .matcher(source);
    while (m.find()) {
      String indent = m.group(1);
      StringBuilder out = new StringBuilder();
      for (String line : m.group(2).split("\n", -1)) {
        out.append(line.startsWith(indent) ? line.substring(indent.length()) : line).append('\n');
      }
      snippets.add(out.toString());
    }
    return snippets;
  }
}
