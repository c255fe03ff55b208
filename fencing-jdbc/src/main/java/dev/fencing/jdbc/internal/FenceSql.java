package dev.fencing.jdbc.internal;

import dev.fencing.schema.FenceSchema;
import java.util.regex.Pattern;

/**
 * PostgreSQL's SQL of the fence table itself: its registration and its read. The guarded
 * statements, which check the fence, are written by {@link GuardedSql}.
 */
public final class FenceSql {

  private static final Pattern LEASE_ID = Pattern.compile("[A-Za-z0-9_-]{1,128}");

  /** A registration's upsert after its row: a newer token replaces an older one, never back. */
  private static final String UPSERT_TAIL =
      " ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token, lease_id ="
          + " EXCLUDED.lease_id, epoch = EXCLUDED.epoch, registered_at = now()"
          + " WHERE f.token < EXCLUDED.token RETURNING f.token";

  /**
   * Checks that a lease id can be written into SQL as a literal.
   *
   * @return {@code leaseId}
   * @throws IllegalArgumentException unless it is 1 to 128 characters from A-Z a-z 0-9 _ -
   */
  static String validLeaseId(String leaseId) {
    if (leaseId == null || !LEASE_ID.matcher(leaseId).matches()) {
      throw new IllegalArgumentException(
          "lease id must be 1 to 128 characters from A-Z a-z 0-9 _ -, got \"" + leaseId + "\"");
    }
    return leaseId;
  }

  private final String fenceTable;
  private final String epoch;

  /** Creates the SQL for a fence in {@code schema} (validated by the caller). */
  public FenceSql(String schema) {
    this.fenceTable = FenceSchema.fenceTable(schema);
    this.epoch = epochFunction(schema);
  }

  /**
   * The call of the fence schema's {@code fence_epoch()}: the server's current epoch (its WAL
   * timeline), which every registration stores and every fence check compares.
   */
  static String epochFunction(String schema) {
    String table = FenceSchema.fenceTable(schema);
    return table.substring(0, table.length() - FenceSchema.FENCE_TABLE.length()) + "fence_epoch()";
  }

  /**
   * The fence's lease id as a column expression that is null for a registration of an older epoch,
   * for reads that classify a refusal.
   */
  public String leaseIdOnCurrentEpoch() {
    return leaseIdOnEpoch(epoch);
  }

  /** {@link #leaseIdOnCurrentEpoch()} for the epoch function {@code epoch}. */
  static String leaseIdOnEpoch(String epoch) {
    return "CASE WHEN epoch = " + epoch + " THEN lease_id END";
  }

  /**
   * Reads the registration of a resource: one parameter, the resource. A registration made on an
   * older epoch (before the server's last promotion) reads with no lease id: it names no holder any
   * more.
   */
  public String readFence() {
    return "SELECT token, "
        + leaseIdOnCurrentEpoch()
        + " FROM "
        + fenceTable
        + " WHERE resource = ?";
  }

  /**
   * Registers a holder on the server's current epoch: parameters resource, token, lease id; returns
   * a row when registered.
   */
  public String register() {
    return "INSERT INTO "
        + fenceTable
        + " AS f (resource, token, lease_id, epoch) VALUES (?, ?, ?, "
        + epoch
        + ")"
        + UPSERT_TAIL;
  }

  /**
   * {@link #register()} in one statement with {@code settings}, a condition that makes settings
   * with {@code set_config(..., true)} (its parameters follow the lease id's) and is never false.
   * The condition is evaluated when the row to insert is produced, before the row is inserted or
   * its conflicting row locked, so the settings govern the upsert's wait for that lock and, in
   * auto-commit, the statement's commit.
   */
  public String registerUnder(String settings) {
    return "INSERT INTO "
        + fenceTable
        + " AS f (resource, token, lease_id, epoch) SELECT ?, ?, ?, "
        + epoch
        + " WHERE "
        + settings
        + UPSERT_TAIL;
  }

  /**
   * Throws unless {@code value} is a plain identifier.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public static String requireIdentifier(String what, String value) {
    return FenceSchema.requireIdentifier(what, value);
  }
}
