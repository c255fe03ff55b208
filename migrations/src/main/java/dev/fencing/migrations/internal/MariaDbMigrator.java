package dev.fencing.migrations.internal;

import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.LockNotAcquiredException;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.migrations.MigrationReport;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The fencing migrations on MariaDB (InnoDB): the fence database through Flyway's MySQL/MariaDB
 * support, then the fence columns on user tables with {@code ALGORITHM=INSTANT} (metadata only, no
 * table copy), each attempt bounded by {@code lock_wait_timeout} and retried. The enforcement
 * trigger is refused: see {@link #NO_ENFORCEMENT}.
 */
public final class MariaDbMigrator {

  /** Flyway location of the MariaDB migrations. */
  public static final String LOCATION = "classpath:db/fencing-mariadb";

  /** Why the enforcement trigger is not installed on MariaDB. */
  public static final String NO_ENFORCEMENT =
      "the enforcement trigger is not offered on MariaDB: it would have to read the writer's"
          + " registration from session user variables (MariaDB has no transaction-local"
          + " settings), which outlive the transaction and leak to the next borrower of a pooled"
          + " connection, and TRUNCATE fires no trigger; fence these tables with --table only and"
          + " write them through GuardedStatements or FencedDsl";

  private static final int LOCK_WAIT_TIMEOUT = 1205;
  private static final int NOT_SUPPORTED = 1845;
  private static final int NOT_SUPPORTED_REASON = 1846;
  private static final long FIRST_BACKOFF_MS = 50;
  private static final long MAX_BACKOFF_MS = 1_000;

  private final DataSource dataSource;
  private final MigrationOptions options;
  private final List<String> columnsAdded = new ArrayList<>();
  private final List<String> columnsPresent = new ArrayList<>();
  private int ddlStatements;
  private int attempts;
  private long maxLockHeldNanos;

  private MariaDbMigrator(DataSource dataSource, MigrationOptions options) {
    this.dataSource = dataSource;
    this.options = options;
  }

  /**
   * Runs the migrations on MariaDB.
   *
   * @throws FencingMigrationException if enforcement was asked for, Flyway or a statement failed
   * @throws LockNotAcquiredException if a table's metadata lock was not granted within the bounds
   */
  public static MigrationReport migrate(DataSource dataSource, MigrationOptions options) {
    if (!options.enforcedTables().isEmpty()) {
      throw new FencingMigrationException(
          NO_ENFORCEMENT + " (asked for " + options.enforcedTables().keySet() + ")", null);
    }
    int applied;
    String version;
    try {
      Flyway flyway =
          Flyway.configure(MariaDbMigrator.class.getClassLoader())
              .dataSource(dataSource)
              .schemas(options.schema())
              .createSchemas(true)
              .table("fencing_schema_history")
              .locations(LOCATION)
              .failOnMissingLocations(true)
              .placeholders(Map.of("fencingSchema", options.schema()))
              .validateMigrationNaming(true)
              .load();
      MigrateResult result = flyway.migrate();
      applied = result.migrationsExecuted;
      MigrationInfo current = flyway.info().current();
      version =
          current == null || current.getVersion() == null ? null : current.getVersion().toString();
    } catch (FlywayException e) {
      throw new FencingMigrationException(
          "applying the fencing migrations to MariaDB database \""
              + options.schema()
              + "\" failed: "
              + e.getMessage(),
          e);
    }
    return new MariaDbMigrator(dataSource, options).run(applied, version);
  }

  private MigrationReport run(int applied, String version) {
    Set<String> tables = new LinkedHashSet<>(options.fencedTables());
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (String table : tables) {
        addColumns(c, table);
      }
    } catch (SQLException e) {
      throw new FencingMigrationException(
          "fencing table migration failed: "
              + e.getMessage()
              + " (SQLSTATE "
              + e.getSQLState()
              + ")",
          e);
    }
    return new MigrationReport(
        options.schema(),
        applied,
        version,
        columnsAdded,
        columnsPresent,
        List.of(),
        List.of(),
        ddlStatements,
        attempts,
        Duration.ofNanos(maxLockHeldNanos));
  }

  private void addColumns(Connection c, String table) throws SQLException {
    FenceSchema.requireTableName(table);
    int dot = table.indexOf('.');
    String schema;
    String name;
    if (dot < 0) {
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT DATABASE()")) {
        rs.next();
        schema = rs.getString(1);
      }
      if (schema == null) {
        throw new FencingMigrationException(
            "table \"" + table + "\" is unqualified and the connection has no current database",
            null);
      }
      name = table;
    } else {
      schema = table.substring(0, dot);
      name = table.substring(dot + 1);
    }
    String qualified = schema + "." + name;
    String tokenType = null;
    boolean hasResource = false;
    boolean exists;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND"
                + " TABLE_NAME = ?")) {
      ps.setString(1, schema);
      ps.setString(2, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        exists = rs.getLong(1) > 0;
      }
    }
    if (!exists) {
      throw new FencingMigrationException(
          "table \"" + qualified + "\" does not exist; create it before fencing it", null);
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM information_schema.COLUMNS"
                + " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME IN (?, ?)")) {
      ps.setString(1, schema);
      ps.setString(2, name);
      ps.setString(3, FenceSchema.TOKEN_COLUMN);
      ps.setString(4, FenceSchema.RESOURCE_COLUMN);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (FenceSchema.TOKEN_COLUMN.equals(rs.getString(1))) {
            tokenType = rs.getString(2) + ("NO".equals(rs.getString(3)) ? " NOT NULL" : "");
          } else {
            hasResource = true;
          }
        }
      }
    }
    if (tokenType != null && !"bigint NOT NULL".equalsIgnoreCase(tokenType)) {
      throw new FencingMigrationException(
          "table \""
              + qualified
              + "\" already has a "
              + FenceSchema.TOKEN_COLUMN
              + " column of type "
              + tokenType
              + "; fencing needs bigint NOT NULL",
          null);
    }
    if (tokenType != null && hasResource) {
      columnsPresent.add(qualified);
      return;
    }
    String columns =
        "ADD COLUMN IF NOT EXISTS `"
            + FenceSchema.TOKEN_COLUMN
            + "` BIGINT NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS `"
            + FenceSchema.RESOURCE_COLUMN
            + "` VARCHAR(200) CHARACTER SET ascii COLLATE ascii_bin NULL";
    String target = "`" + schema + "`.`" + name + "`";
    try {
      alter(c, qualified, "ALTER TABLE " + target + " " + columns + ", ALGORITHM=INSTANT");
    } catch (SQLException e) {
      if (e.getErrorCode() != NOT_SUPPORTED && e.getErrorCode() != NOT_SUPPORTED_REASON) {
        throw e;
      }
      // no instant add on this table: in place, without blocking writes; never a silent copy
      alter(
          c, qualified, "ALTER TABLE " + target + " " + columns + ", ALGORITHM=INPLACE, LOCK=NONE");
    }
    columnsAdded.add(qualified);
  }

  /**
   * Runs one DDL statement under {@code lock_wait_timeout} (whole seconds on MariaDB, rounded up),
   * retried with backoff while the metadata lock is not granted.
   */
  private void alter(Connection c, String table, String ddl) throws SQLException {
    long seconds = Math.max(1, (options.lockTimeout().toMillis() + 999) / 1000);
    String sql = "SET STATEMENT lock_wait_timeout = " + seconds + " FOR " + ddl;
    long started = System.nanoTime();
    long backoff = FIRST_BACKOFF_MS;
    int tries = 0;
    while (true) {
      tries++;
      attempts++;
      long start = System.nanoTime();
      try (Statement s = c.createStatement()) {
        s.execute(sql);
        ddlStatements++;
        maxLockHeldNanos = Math.max(maxLockHeldNanos, System.nanoTime() - start);
        return;
      } catch (SQLException e) {
        if (e.getErrorCode() != LOCK_WAIT_TIMEOUT) {
          throw e;
        }
        Duration spent = Duration.ofNanos(System.nanoTime() - started);
        if (tries >= options.maxAttempts() || spent.compareTo(options.maxTotalWait()) >= 0) {
          throw new LockNotAcquiredException(table, "add the fence columns", tries, spent, e);
        }
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SQLException("interrupted while waiting to retry " + ddl, e);
      }
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }
}
