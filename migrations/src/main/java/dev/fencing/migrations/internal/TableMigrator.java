package dev.fencing.migrations.internal;

import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrationException;
import dev.fencing.migrations.LockNotAcquiredException;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.migrations.MigrationReport;
import dev.fencing.schema.FenceSchema;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** Adds the column and installs the triggers on user tables, with lock_timeout and retries. */
public final class TableMigrator {
  private static final String LOCK_NOT_AVAILABLE = "55P03";
  private static final long FIRST_BACKOFF_MS = 50;
  private static final long MAX_BACKOFF_MS = 1_000;

  /** tgtype of BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW: ROW|BEFORE|INSERT|DELETE|UPDATE. */
  private static final int EXPECTED_TGTYPE = 1 | 2 | 4 | 8 | 16;

  /** tgtype of BEFORE TRUNCATE FOR EACH STATEMENT: BEFORE|TRUNCATE. */
  private static final int EXPECTED_TRUNCATE_TGTYPE = 2 | 32;

  private static final String ENFORCE_TRIGGER = "fencing_enforce";
  private static final String ENFORCE_FUNCTION = "enforce_fence";
  private static final String TRUNCATE_TRIGGER = "fencing_truncate";
  private static final String TRUNCATE_FUNCTION = "enforce_fence_truncate";

  private final javax.sql.DataSource dataSource;
  private final MigrationOptions options;

  private final List<String> columnsAdded = new ArrayList<>();
  private final List<String> columnsPresent = new ArrayList<>();
  private final List<String> triggersInstalled = new ArrayList<>();
  private final List<String> triggersPresent = new ArrayList<>();
  private int ddlStatements;
  private int attempts;
  private long maxLockHeldNanos;

  /**
   * Creates the migrator.
   *
   * @param dataSource the target database
   * @param options validated options
   */
  public TableMigrator(javax.sql.DataSource dataSource, MigrationOptions options) {
    this.dataSource = dataSource;
    this.options = options;
  }

  /**
   * Does the table work and builds the report.
   *
   * @param schemaMigrationsApplied from Flyway
   * @param schemaVersion from Flyway
   * @return the report
   */
  public MigrationReport run(int schemaMigrationsApplied, String schemaVersion) {
    Map<String, EnforcementMode> wanted = new LinkedHashMap<>();
    for (String t : options.fencedTables()) {
      wanted.putIfAbsent(t, null);
    }
    wanted.putAll(options.enforcedTables());

    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Map<String, EnforcementMode> resolved = new LinkedHashMap<>();
      for (Map.Entry<String, EnforcementMode> e : wanted.entrySet()) {
        String name = resolve(c, e.getKey());
        EnforcementMode mode = e.getValue();
        if (mode != null || !resolved.containsKey(name)) {
          resolved.put(name, mode);
        }
      }
      // PostgreSQL fires a parent's row trigger only for the parent's own rows: a write through
      // the parent to a row of a table that inherits from it fires that table's triggers. So every
      // inheritor is enforced like the parent (partitions get clones of the row trigger anyway).
      for (Map.Entry<String, EnforcementMode> e : List.copyOf(resolved.entrySet())) {
        if (e.getValue() != null) {
          for (String heir : inheritors(c, e.getKey())) {
            resolved.put(heir, e.getValue());
          }
        }
      }
      for (String table : resolved.keySet()) {
        addColumn(c, table);
      }
      for (Map.Entry<String, EnforcementMode> e : resolved.entrySet()) {
        if (e.getValue() != null) {
          installTrigger(c, e.getKey(), e.getValue());
        }
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
        schemaMigrationsApplied,
        schemaVersion,
        columnsAdded,
        columnsPresent,
        triggersInstalled,
        triggersPresent,
        ddlStatements,
        attempts,
        Duration.ofNanos(maxLockHeldNanos));
  }

  /** Resolves a validated name to schema.table as stored in the catalog. */
  private static String resolve(Connection c, String table) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT n.nspname, c.relname, c.relkind FROM pg_catalog.pg_class c"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE c.oid = pg_catalog.to_regclass(?)")) {
      ps.setString(1, FenceSchema.quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new FencingMigrationException("table " + table + " does not exist", null);
        }
        String kind = rs.getString(3);
        String name = rs.getString(1) + "." + rs.getString(2);
        if (!"r".equals(kind) && !"p".equals(kind)) {
          throw new FencingMigrationException(
              "table " + table + " (" + name + ") is not a table (relkind " + kind + ")", null);
        }
        return name;
      }
    }
  }

  /**
   * The tables that inherit from {@code table}, directly or not, that are not partitions, as
   * schema.table.
   */
  private static List<String> inheritors(Connection c, String table) throws SQLException {
    List<String> heirs = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "WITH RECURSIVE heirs (oid) AS (SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
                + " WHERE i.inhparent = pg_catalog.to_regclass(?)"
                + " UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
                + " JOIN heirs h ON i.inhparent = h.oid)"
                + " SELECT n.nspname || '.' || k.relname FROM heirs h"
                + " JOIN pg_catalog.pg_class k ON k.oid = h.oid"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace"
                + " WHERE NOT k.relispartition ORDER BY 1")) {
      ps.setString(1, FenceSchema.quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          heirs.add(rs.getString(1));
        }
      }
    }
    return heirs;
  }

  private void addColumn(Connection c, String table) throws SQLException {
    int dot = table.indexOf('.');
    boolean hasToken = false;
    boolean hasResource = false;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
                + " WHERE table_schema = ? AND table_name = ? AND column_name IN (?, ?)")) {
      ps.setString(1, table.substring(0, dot));
      ps.setString(2, table.substring(dot + 1));
      ps.setString(3, FenceSchema.TOKEN_COLUMN);
      ps.setString(4, FenceSchema.RESOURCE_COLUMN);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String column = rs.getString(1);
          String type = rs.getString(2);
          String nullable = rs.getString(3);
          if (FenceSchema.TOKEN_COLUMN.equals(column)) {
            requireColumnType(table, column, type, nullable, "bigint", false);
            hasToken = true;
          } else {
            requireColumnType(table, column, type, nullable, "text", true);
            hasResource = true;
          }
        }
      }
    }
    if (hasToken && hasResource) {
      columnsPresent.add(table);
      return;
    }
    String q = FenceSchema.quote(table);
    runDdl(
        c,
        table,
        "add the fence columns",
        "LOCK TABLE " + q + " IN ACCESS EXCLUSIVE MODE",
        List.of(
            "ALTER TABLE "
                + q
                + " ADD COLUMN IF NOT EXISTS "
                + FenceSchema.TOKEN_COLUMN
                + " BIGINT NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS "
                + FenceSchema.RESOURCE_COLUMN
                + " TEXT"));
    columnsAdded.add(table);
  }

  private static void requireColumnType(
      String table,
      String column,
      String type,
      String nullable,
      String expectedType,
      boolean expectNullable) {
    boolean isNullable = !"NO".equals(nullable);
    if (!expectedType.equals(type) || isNullable != expectNullable) {
      throw new FencingMigrationException(
          "table "
              + table
              + " already has a "
              + column
              + " column, but it is "
              + type
              + (isNullable ? " nullable" : " NOT NULL")
              + "; fencing needs "
              + expectedType
              + (expectNullable ? " (nullable)" : " NOT NULL DEFAULT 0"),
          null);
    }
  }

  private void installTrigger(Connection c, String table, EnforcementMode mode)
      throws SQLException {
    String label = table + " (" + mode.triggerArgument() + ")";
    String expectedArgs =
        HexFormat.of().formatHex(mode.triggerArgument().getBytes(StandardCharsets.US_ASCII)) + "00";
    int inPlace = 0;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT t.tgname, t.tgtype, t.tgenabled, t.tgnargs,"
                + " pg_catalog.encode(t.tgargs, 'hex'), pn.nspname, p.proname"
                + " FROM pg_catalog.pg_trigger t"
                + " JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid"
                + " JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace"
                + " WHERE t.tgrelid = pg_catalog.to_regclass(?)"
                + " AND t.tgname IN ('"
                + ENFORCE_TRIGGER
                + "', '"
                + TRUNCATE_TRIGGER
                + "')")) {
      ps.setString(1, FenceSchema.quote(table));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          boolean enforce = ENFORCE_TRIGGER.equals(rs.getString(1));
          boolean same =
              rs.getInt(2) == (enforce ? EXPECTED_TGTYPE : EXPECTED_TRUNCATE_TGTYPE)
                  && "O".equals(rs.getString(3))
                  && rs.getInt(4) == 1
                  && expectedArgs.equals(rs.getString(5))
                  && options.schema().equals(rs.getString(6))
                  && (enforce ? ENFORCE_FUNCTION : TRUNCATE_FUNCTION).equals(rs.getString(7));
          if (same) {
            inPlace++;
          }
        }
      }
    }
    if (inPlace == 2) {
      triggersPresent.add(label);
      installTruncateTriggerOnPartitions(c, table, mode);
      return;
    }
    String q = FenceSchema.quote(table);
    String functions = FenceSchema.quote(options.schema()) + ".";
    String argument = "('" + mode.triggerArgument() + "')";
    runDdl(
        c,
        table,
        "install triggers " + ENFORCE_TRIGGER + " and " + TRUNCATE_TRIGGER,
        "LOCK TABLE " + q + " IN SHARE ROW EXCLUSIVE MODE",
        List.of(
            "CREATE OR REPLACE TRIGGER "
                + ENFORCE_TRIGGER
                + " BEFORE INSERT OR UPDATE OR DELETE ON "
                + q
                + " FOR EACH ROW EXECUTE FUNCTION "
                + functions
                + ENFORCE_FUNCTION
                + argument,
            "CREATE OR REPLACE TRIGGER "
                + TRUNCATE_TRIGGER
                + " BEFORE TRUNCATE ON "
                + q
                + " FOR EACH STATEMENT EXECUTE FUNCTION "
                + functions
                + TRUNCATE_FUNCTION
                + argument,
            "ALTER TABLE " + q + " ENABLE TRIGGER " + ENFORCE_TRIGGER,
            "ALTER TABLE " + q + " ENABLE TRIGGER " + TRUNCATE_TRIGGER));
    triggersInstalled.add(label);
    installTruncateTriggerOnPartitions(c, table, mode);
  }

  /**
   * Row triggers of a partitioned table are cloned to its partitions, present and future; statement
   * triggers are not, and a TRUNCATE of one partition fires only that partition's. So every
   * partition gets its own {@code fencing_truncate} (a partition attached later gets it when the
   * migration runs again).
   */
  private void installTruncateTriggerOnPartitions(Connection c, String table, EnforcementMode mode)
      throws SQLException {
    List<String> missing = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT n.nspname || '.' || k.relname FROM pg_catalog.pg_partition_tree("
                + "pg_catalog.to_regclass(?)) tree"
                + " JOIN pg_catalog.pg_class k ON k.oid = tree.relid"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = k.relnamespace"
                + " WHERE tree.level > 0 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t"
                + " JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid"
                + " JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace"
                + " WHERE t.tgrelid = tree.relid AND t.tgname = ? AND t.tgenabled = 'O'"
                + " AND t.tgtype = ? AND p.proname = ? AND pn.nspname = ?"
                + " AND pg_catalog.encode(t.tgargs, 'hex') = ?)"
                + " ORDER BY tree.level, 1")) {
      ps.setString(1, FenceSchema.quote(table));
      ps.setString(2, TRUNCATE_TRIGGER);
      ps.setInt(3, EXPECTED_TRUNCATE_TGTYPE);
      ps.setString(4, TRUNCATE_FUNCTION);
      ps.setString(5, options.schema());
      ps.setString(
          6,
          HexFormat.of().formatHex(mode.triggerArgument().getBytes(StandardCharsets.US_ASCII))
              + "00");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          missing.add(rs.getString(1));
        }
      }
    }
    for (String partition : missing) {
      String q = FenceSchema.quote(partition);
      runDdl(
          c,
          partition,
          "install trigger " + TRUNCATE_TRIGGER + " on a partition of " + table,
          "LOCK TABLE " + q + " IN SHARE ROW EXCLUSIVE MODE",
          List.of(
              "CREATE OR REPLACE TRIGGER "
                  + TRUNCATE_TRIGGER
                  + " BEFORE TRUNCATE ON "
                  + q
                  + " FOR EACH STATEMENT EXECUTE FUNCTION "
                  + FenceSchema.quote(options.schema())
                  + "."
                  + TRUNCATE_FUNCTION
                  + "('"
                  + mode.triggerArgument()
                  + "')",
              "ALTER TABLE " + q + " ENABLE TRIGGER " + TRUNCATE_TRIGGER));
      triggersInstalled.add(
          partition + " (" + mode.triggerArgument() + ", partition of " + table + ")");
    }
  }

  /**
   * Runs {@code lock} then {@code statements} in one transaction under {@code SET LOCAL
   * lock_timeout}, retrying on lock timeouts with exponential backoff until the bound.
   */
  private void runDdl(Connection c, String table, String what, String lock, List<String> statements)
      throws SQLException {
    long start = System.nanoTime();
    long bound = options.maxTotalWait().toNanos();
    long backoff = FIRST_BACKOFF_MS;
    int tries = 0;
    ddlStatements++;
    c.setAutoCommit(false);
    try {
      while (true) {
        tries++;
        attempts++;
        try (Statement s = c.createStatement()) {
          s.execute("SET LOCAL lock_timeout = '" + options.lockTimeout().toMillis() + "ms'");
          s.execute(lock);
          long locked = System.nanoTime();
          for (String sql : statements) {
            s.execute(sql);
          }
          c.commit();
          maxLockHeldNanos = Math.max(maxLockHeldNanos, System.nanoTime() - locked);
          return;
        } catch (SQLException e) {
          rollbackQuietly(c, e);
          if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
            throw new FencingMigrationException(
                "could not " + what + " on table " + table + ": " + e.getMessage(), e);
          }
          long elapsed = System.nanoTime() - start;
          long sleepMs =
              Math.round(backoff * (0.75 + 0.5 * ThreadLocalRandom.current().nextDouble()));
          long nextAttemptEnds = elapsed + sleepMs * 1_000_000L + options.lockTimeout().toNanos();
          if (tries >= options.maxAttempts() || nextAttemptEnds > bound) {
            throw new LockNotAcquiredException(table, what, tries, Duration.ofNanos(elapsed), e);
          }
          sleep(sleepMs, table);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
      }
    } finally {
      c.setAutoCommit(true);
    }
  }

  private static void rollbackQuietly(Connection c, SQLException original) {
    try {
      c.rollback();
    } catch (SQLException e) {
      original.addSuppressed(e);
    }
  }

  private static void sleep(long ms, String table) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FencingMigrationException(
          "interrupted while waiting to retry locking table " + table, e);
    }
  }
}
