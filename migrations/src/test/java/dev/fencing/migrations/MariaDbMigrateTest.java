package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.migrations.internal.DriverManagerDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The migrations on MariaDB: the fence database through Flyway, the fence columns added in place
 * without a table copy on a 1,000,000-row table (the lock time is printed), idempotent reruns, and
 * the enforcement trigger refused. Its own databases.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbMigrateTest {

  static final String URL =
      System.getProperty("fencing.test.mariadb", "jdbc:mariadb://127.0.0.1:3306/test?user=root");

  private String database;
  private String fenceDb;

  @BeforeAll
  void setUp() {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    database = ("fmm_" + suffix).toLowerCase(Locale.ROOT);
    fenceDb = ("fmmf_" + suffix).toLowerCase(Locale.ROOT);
    exec(
        "CREATE DATABASE " + database,
        "CREATE TABLE "
            + database
            + ".big (id BIGINT PRIMARY KEY, payload VARCHAR(64) NOT NULL) ENGINE=InnoDB",
        "INSERT INTO " + database + ".big SELECT seq, CONCAT('row-', seq) FROM seq_1_to_1000000");
  }

  @AfterAll
  void tearDown() {
    exec("DROP DATABASE IF EXISTS " + database, "DROP DATABASE IF EXISTS " + fenceDb);
  }

  @Test
  void addsTheColumnsToAMillionRowsInPlaceAndIsIdempotent() {
    DriverManagerDataSource dataSource = new DriverManagerDataSource(URL, null, null);
    MigrationOptions options =
        MigrationOptions.builder().schema(fenceDb).fence(database + ".big").build();
    MigrationReport first = FencingMigrations.migrate(dataSource, options);
    System.out.println(
        "[mariadb migration] 1,000,000 rows: fence columns added, DDL held its lock for "
            + first.maxLockHeld().toMillis()
            + " ms over "
            + first.attempts()
            + " attempt(s)");
    assertThat(first.schemaMigrationsApplied()).isEqualTo(2);
    assertThat(first.columnsAdded()).containsExactly(database + ".big");
    assertThat(first.maxLockHeld()).isLessThan(Duration.ofSeconds(1)); // a copy takes ~1.3 s here
    MigrationReport again = FencingMigrations.migrate(dataSource, options);
    assertThat(again.changedNothing()).isTrue();
  }

  @Test
  void refusesTheEnforcementTrigger() {
    assertThatThrownBy(
            () ->
                FencingMigrations.migrate(
                    new DriverManagerDataSource(URL, null, null),
                    MigrationOptions.builder()
                        .schema(fenceDb)
                        .enforce(database + ".big", EnforcementMode.LENIENT)
                        .build()))
        .isInstanceOf(FencingMigrationException.class)
        .hasMessageContaining("not offered on MariaDB");
  }

  private static void exec(String... sql) {
    try (Connection c = DriverManager.getConnection(URL);
        Statement s = c.createStatement()) {
      for (String q : sql) {
        s.execute(q);
      }
    } catch (SQLException e) {
      throw new AssertionError(
          "MariaDB at "
              + URL
              + " failed: "
              + e.getMessage()
              + " (start it with .ci/run's ensure_mariadb, or start-stop-daemon --start --oknodo"
              + " --background --exec /usr/sbin/mariadbd -- --user=mysql)",
          e);
    }
  }
}
