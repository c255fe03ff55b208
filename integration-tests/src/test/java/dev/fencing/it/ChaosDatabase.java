package dev.fencing.it;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Random;

/**
 * The fenced database of a chaos run: what differs between PostgreSQL ({@link PostgresChaos}) and
 * MariaDB ({@link MariaDbChaos}). The run, the nemesis, the workers' transaction shapes and the
 * {@link Checker}'s violation kinds are shared; this seam provides the tables and the commit-time
 * history, the fence, the connection-ending fault, the few statements whose syntax differs, and the
 * clean-up.
 *
 * <p>The contract every implementation keeps: after a run, the table (or view) {@code judged} of
 * the run's schema holds one row per committed write to {@code ledger}, {@code items} or {@code
 * shared}, with the highest token and the lease registered last among the registrations committed
 * <b>before that write's commit</b> ({@code registered_max}, {@code registered_lease}).
 */
interface ChaosDatabase {

  /** {@code postgres} or {@code mariadb}: the workers' {@code db=} argument. */
  String name();

  /** The administrator's JDBC URL. */
  String jdbc();

  /** Fails with a message saying how to start the server if it is not reachable. */
  void requireReachable();

  /** The run's schema (a database on MariaDB) for the random {@code suffix}. */
  String schemaName(String suffix);

  /** The run's fence schema for the random {@code suffix}. */
  String fenceSchemaName(String suffix);

  /** Creates the tables of one run and what records their commit-time history. */
  void create(Connection admin, String schema, int resources) throws SQLException;

  /**
   * Installs the fence on {@link ChaosSchema#FENCED_TABLES} (with the enforcement trigger if {@code
   * mode} is {@code trigger}) and records every registration into {@code registrations}.
   */
  void installFence(String schema, String fenceSchema, String mode) throws SQLException;

  /**
   * The JDBC URL of the worker whose connections are named {@code appName} (ended together by
   * {@link #endConnections}); may create what that needs (a user).
   */
  String workerJdbc(String appName, String schema, String fenceSchema) throws SQLException;

  /** Data source properties of the worker's pool. */
  Map<String, String> workerPoolProperties(String appName);

  /**
   * Ends every connection of the worker named {@code appName}: the fault {@link
   * ChaosRun.Fault#PG_TERMINATE} ({@code pg_terminate_backend} on PostgreSQL, {@code KILL
   * CONNECTION} on MariaDB). Returns how it was done, for the nemesis log.
   */
  String endConnections(String appName) throws SQLException;

  /**
   * The condition, appended to a query of the fence row, that keeps the row only if its
   * registration is of the server's current epoch (a registration of an older one is refused by
   * design, so a refusal then is no refusal of the current holder): empty where there is no epoch.
   */
  default String ofCurrentEpoch(String fenceSchema) {
    return "";
  }

  /**
   * The fault {@link ChaosRun.Fault#PG_FAILOVER}: the primary is lost and a standby that lags
   * behind it is promoted. Returns how it was done, for the nemesis log.
   *
   * @throws IllegalStateException if this database has no standby ({@link PostgresPairChaos} has)
   */
  default String promoteStandby(Random random) throws SQLException {
    throw new IllegalStateException(
        name() + " at " + jdbc() + " has no standby: PG_FAILOVER runs on a PostgresPairChaos");
  }

  /** Ends the run's connections and drops what it created (the schemas unless {@code keep}). */
  void cleanUp(String suffix, String schema, String fenceSchema, boolean keep) throws SQLException;

  /** The plain upsert of an item, {@code (resource, item, token, lease_id, attempt)}. */
  String plainItemUpsert(String schema);

  /** The plain upsert of a shared row, {@code (item, resource, token, lease_id, attempt)}. */
  String plainSharedUpsert(String schema);

  /**
   * Whether {@code count}, the update count of an upsert of one row, says that the row was written:
   * 1 on PostgreSQL; 1 (inserted, or found unchanged) or 2 (updated) on MariaDB.
   */
  boolean upsertWroteItsRow(int count);

  /**
   * Run by a worker as the last statement of every workload transaction, right before {@code
   * COMMIT} (nothing on PostgreSQL, whose deferred trigger judges the write at commit).
   */
  void beforeCommit(Connection c, String schema) throws SQLException;

  /**
   * Checks of the history recorder itself, kind to query (one row per finding), which the {@link
   * Checker} counts as violations: empty on PostgreSQL.
   */
  Map<String, String> recorderChecks(String schema);

  /** The implementation named {@code name} ({@link #name()}). */
  static ChaosDatabase named(String name) {
    return switch (name) {
      case "postgres" -> PostgresChaos.INSTANCE;
      case "mariadb" -> MariaDbChaos.INSTANCE;
      default -> throw new IllegalArgumentException("no chaos database named " + name);
    };
  }
}
