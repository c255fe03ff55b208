package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.FencingToken;
import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseOptions;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.TableImpl;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease and write examples, as written in the docs: the first block between {@code // README:}
 * markers below must appear verbatim in docs/leases.md (and runs), the others in README.md.
 */
class ReadmeExamplesTest {

  private static final Logger log = LoggerFactory.getLogger(ReadmeExamplesTest.class);
  private static final Path README = Path.of("..", "README.md");
  private static final Path LEASES_PAGE = Path.of("..", "docs", "leases.md");
  private static final Path SOURCE =
      Path.of("src", "test", "java", "dev", "fencing", "jdbc", "ReadmeExamplesTest.java");

  private final List<FencingToken> jobsRun = new ArrayList<>();

  @Test
  void theExamplesInTheDocsAreTheOnesCompiledHere() throws IOException {
    List<String> snippets = snippets(Files.readString(SOURCE));
    assertThat(snippets).hasSize(4);
    assertThat(Files.readString(LEASES_PAGE))
        .as("docs/leases.md contains, verbatim:%n%s", snippets.get(0))
        .contains(snippets.get(0));
    String readme = Files.readString(README);
    for (String snippet : snippets.subList(1, snippets.size())) {
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

  @SuppressWarnings("unused") // compiled, not run: the writes are exercised by the other tests
  private static void writeInThreeWays(FencedDataSource db) {
    class GuardedInvoiceDao {
      // README:begin
      void markPaid(long invoiceId) throws SQLException {
        try (Connection c = db.getConnection();
            PreparedStatement update =
                GuardedStatements.update(c, "invoices", "status = ?", "id = ?")) {
          update.setString(1, "PAID");
          update.setLong(2, invoiceId);
          update.executeUpdate(); // StaleTokenException if a newer holder registered
        }
      }
      // README:end
    }
    class JooqInvoiceDao {
      // README:begin
      FencedDsl fenced = new FencedDsl(FenceOptions.defaults());
      DSLContext ctx = DSL.using(db, SQLDialect.POSTGRES);

      void markPaid(long invoiceId) {
        fenced.update(ctx, INVOICES, Map.of(INVOICES.STATUS, "PAID"), INVOICES.ID.eq(invoiceId));
      }
      // README:end
    }
  }

  /**
   * The {@code invoices} table of the README's jOOQ example, as jOOQ's code generator shapes it.
   */
  private static final Invoices INVOICES = new Invoices();

  /** A table as jOOQ's code generator writes one, with the two columns the example uses. */
  private static final class Invoices extends TableImpl<Record> {
    private static final long serialVersionUID = 1L;

    final TableField<Record, Long> ID = createField(DSL.name("id"), SQLDataType.BIGINT);
    final TableField<Record, String> STATUS = createField(DSL.name("status"), SQLDataType.CLOB);

    Invoices() {
      super(DSL.name("invoices"));
    }
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
