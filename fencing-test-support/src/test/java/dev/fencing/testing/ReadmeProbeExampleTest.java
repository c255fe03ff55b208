package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The "Test that your DAOs are fenced" example of README.md: the test class between the {@code //
 * README:} markers below appears verbatim in the README and in docs/testing.md, and runs here (as a
 * nested test class) on a real PostgreSQL.
 */
class ReadmeProbeExampleTest {

  private static final Path README = Path.of("..", "README.md");
  private static final Path TESTING_PAGE = Path.of("..", "docs", "testing.md");
  private static final Path SOURCE =
      Path.of("src", "test", "java", "dev", "fencing", "testing", "ReadmeProbeExampleTest.java");

  private static ProbeDatabase database;
  private static HikariDataSource testPool;
  private static FenceOptions fenceOptions;

  @BeforeAll
  static void setUp() {
    database = ProbeDatabase.postgres();
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(database.url);
    config.setSchema(database.schema); // the probe compares the tables of the current schema
    config.setMaximumPoolSize(2);
    testPool = new HikariDataSource(config);
    fenceOptions = FenceOptions.defaults().withSchema(database.fenceSchema);
  }

  @AfterAll
  static void tearDown() {
    testPool.close();
    database.close();
  }

  @Test
  void theReadmeShowsTheTestCompiledHere() throws IOException {
    Matcher m =
        Pattern.compile("\\n( *)// README:begin\\n(.*?)\\n *// README:end", Pattern.DOTALL)
            .matcher(Files.readString(SOURCE));
    assertThat(m.find()).isTrue();
    StringBuilder snippet = new StringBuilder();
    for (String line : m.group(2).split("\n", -1)) {
      snippet.append(line.startsWith(m.group(1)) ? line.substring(m.group(1).length()) : line);
      snippet.append('\n');
    }
    for (Path page : new Path[] {README, TESTING_PAGE}) {
      assertThat(Files.readString(page))
          .as("%s contains, verbatim:%n%s", page, snippet)
          .contains(snippet.toString());
    }
  }

  /** A DAO as a team writes it: plain SQL on a connection from the data source it is given. */
  static final class BillingDao {
    private final DataSource db;

    BillingDao(DataSource db) {
      this.db = db;
    }

    void charge(long account, long cents) throws SQLException {
      try (Connection c = db.getConnection();
          PreparedStatement s =
              c.prepareStatement("UPDATE accounts SET balance = balance - ? WHERE id = ?")) {
        s.setLong(1, cents);
        s.setLong(2, account);
        s.executeUpdate();
      }
    }
  }

  @Nested
  // README:begin
  @FencingTest
  class BillingDaoFencingTest {

    FencedDataSource db = FencedDataSource.wrap(testPool, fenceOptions); // as in your application
    BillingDao billing = new BillingDao(db);

    @Test
    void chargingIsFenced(StaleWriterProbe probe) {
      // runs as the holder, as a paused holder whose successor registered, as the successor
      probe.check(as -> billing.charge(1, 500));
    }
  }
  // README:end
}
