package dev.fencing.migrations;

import java.time.Duration;
import java.util.List;

/**
 * What {@link FencingMigrations#migrate} did. Table names are schema-qualified as resolved in the
 * database; trigger entries read {@code schema.table (mode)}.
 *
 * @param schema the fencing schema
 * @param schemaMigrationsApplied how many of the fencing schema's own Flyway migrations ran now
 * @param schemaVersion the fencing schema's version after the run (for example {@code "2"})
 * @param columnsAdded tables that got the {@code fence_token} column now
 * @param columnsAlreadyPresent tables that already had a compatible {@code fence_token} column
 * @param triggersInstalled tables whose {@code fencing_enforce} trigger was created or replaced now
 * @param triggersAlreadyPresent tables whose trigger was already there with the requested mode
 * @param ddlStatements DDL transactions run on user tables (0 on a re-run)
 * @param attempts attempts those transactions took in total; more than {@code ddlStatements} means
 *     some attempts hit {@code lock_timeout} and were retried
 * @param maxLockHeld the longest time one DDL transaction held its table lock (from lock granted to
 *     commit); {@link Duration#ZERO} if none ran
 */
public record MigrationReport(
    String schema,
    int schemaMigrationsApplied,
    String schemaVersion,
    List<String> columnsAdded,
    List<String> columnsAlreadyPresent,
    List<String> triggersInstalled,
    List<String> triggersAlreadyPresent,
    int ddlStatements,
    int attempts,
    Duration maxLockHeld) {

  /**
   * Copies the lists.
   *
   * @param schema see {@link #schema()}
   * @param schemaMigrationsApplied see {@link #schemaMigrationsApplied()}
   * @param schemaVersion see {@link #schemaVersion()}
   * @param columnsAdded see {@link #columnsAdded()}
   * @param columnsAlreadyPresent see {@link #columnsAlreadyPresent()}
   * @param triggersInstalled see {@link #triggersInstalled()}
   * @param triggersAlreadyPresent see {@link #triggersAlreadyPresent()}
   * @param ddlStatements see {@link #ddlStatements()}
   * @param attempts see {@link #attempts()}
   * @param maxLockHeld see {@link #maxLockHeld()}
   * @throws NullPointerException if a list or the duration is null
   */
  public MigrationReport {
    columnsAdded = List.copyOf(columnsAdded);
    columnsAlreadyPresent = List.copyOf(columnsAlreadyPresent);
    triggersInstalled = List.copyOf(triggersInstalled);
    triggersAlreadyPresent = List.copyOf(triggersAlreadyPresent);
    java.util.Objects.requireNonNull(maxLockHeld, "maxLockHeld");
  }

  /**
   * Whether the run changed nothing (everything was already in place).
   *
   * @return true for a no-op run
   */
  public boolean changedNothing() {
    return schemaMigrationsApplied == 0 && columnsAdded.isEmpty() && triggersInstalled.isEmpty();
  }

  /**
   * A human-readable, multi-line summary (what the command-line tool prints).
   *
   * @return the summary
   */
  public String summary() {
    StringBuilder sb = new StringBuilder();
    sb.append("fencing schema \"")
        .append(schema)
        .append("\": ")
        .append(schemaMigrationsApplied)
        .append(" migration(s) applied, now at version ")
        .append(schemaVersion)
        .append('\n');
    line(sb, "fence_token column added", columnsAdded);
    line(sb, "fence_token column already present", columnsAlreadyPresent);
    line(sb, "fencing_enforce trigger installed", triggersInstalled);
    line(sb, "fencing_enforce trigger already present", triggersAlreadyPresent);
    sb.append("DDL transactions: ")
        .append(ddlStatements)
        .append(", attempts: ")
        .append(attempts)
        .append(", longest table lock held: ")
        .append(maxLockHeld.toNanos() / 1_000_000.0)
        .append(" ms");
    return sb.toString();
  }

  private static void line(StringBuilder sb, String label, List<String> items) {
    sb.append(label).append(": ");
    sb.append(items.isEmpty() ? "none" : String.join(", ", items)).append('\n');
  }
}
