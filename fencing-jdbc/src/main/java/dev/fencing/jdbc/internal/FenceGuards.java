package dev.fencing.jdbc.internal;

import java.util.List;

/**
 * The guarded SQL of one registration, in one database's dialect: what {@link FencedConnection},
 * {@code GuardedStatements} and {@code FencedDsl} prepare. Every form carries the row guard and a
 * resource-fence check that the database enforces.
 */
public interface FenceGuards {

  /**
   * The resource fence as a predicate: true only while the fence names this registration, holding
   * the fence row against a concurrent registration until the writer's transaction ends.
   */
  String fenceHeld();

  /**
   * Locks the fence row and, if it names this registration, returns one row (and, where the
   * database has transaction-local state, sets the registration's batch marker in the transaction,
   * which the rows of {@link GuardedSql.Guarded#batched()} check); none otherwise.
   */
  String verify();

  /** The lease time as the idle-in-transaction bound, for transaction-local use (trigger mode). */
  String idleTimeout();

  /**
   * The trigger-mode settings of this registration as one statement with literals only, to run in
   * front of a write in the same round trip ({@code settings; statement}).
   *
   * @throws UnsupportedOperationException where the database has no trigger mode
   */
  String triggerSettings();

  /** A guarded UPDATE. */
  GuardedSql.Guarded update(String table, String assignments, String condition);

  /** A guarded DELETE. */
  GuardedSql.Guarded delete(String table, String condition);

  /** A guarded INSERT of one row, one parameter per column. */
  GuardedSql.Guarded insert(String table, List<String> columns);

  /** A guarded upsert on {@code conflictColumns}. */
  GuardedSql.Guarded upsert(String table, List<String> columns, List<String> conflictColumns);
}
