package dev.fencing.examples;

import dev.fencing.jdbc.FenceOptions;
import java.util.Locale;

/** How the fenced lease (mode 4, {@code run --lock fenced}) has the job's writes fenced. */
public enum FenceWrites {
  /**
   * The DAOs stay as they are; a {@code FencedDataSource} in trigger mode carries the lease to the
   * enforcement trigger, which checks every write against the fence. PostgreSQL only: fencing
   * refuses trigger mode on MariaDB (docs/mariadb.md).
   */
  TRIGGER("the enforcement trigger (trigger mode: the DAO's plain SQL, unchanged)"),
  /**
   * The DAOs write through guarded statements ({@link BillingDao#guarded}: {@code
   * GuardedStatements}, jOOQ {@code FencedDsl}); each write carries the fence check itself. Both
   * databases.
   */
  GUARDED("guarded statements (GuardedStatements / FencedDsl: the fence check is in each write)");

  private final String description;

  FenceWrites(String description) {
    this.description = description;
  }

  /** Trigger mode where the database has the trigger, guarded statements elsewhere. */
  public static FenceWrites defaultFor(BillingDatabase database) {
    return database.hasEnforcementTrigger() ? TRIGGER : GUARDED;
  }

  /** The command line's name: {@code trigger} or {@code guarded}. */
  public String option() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** What fences the writes, for the log. */
  public String description() {
    return description;
  }

  /** The {@code FencedDataSource}'s options for a fence in {@code fenceSchema}. */
  public FenceOptions options(String fenceSchema) {
    return FenceOptions.defaults().withSchema(fenceSchema).withTriggerMode(this == TRIGGER);
  }

  /** The DAO the fenced writes go through. */
  public BillingDao dao(BillingDao dao, FenceOptions options) {
    return this == TRIGGER ? dao : dao.guarded(options);
  }
}
