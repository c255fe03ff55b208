package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.schema.DatabaseProduct;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The database seam: everything the library says to the fenced database goes through one of these,
 * chosen once from the connection's {@link java.sql.DatabaseMetaData#getDatabaseProductName()}.
 * PostgreSQL ({@link PostgresDialect}) and MariaDB with InnoDB ({@link MariaDbDialect}) are behind
 * it; any other product is refused by name rather than spoken to in a dialect it may misread.
 */
public interface FenceDialect {

  /** The database's name, for messages. */
  String name();

  /**
   * Reads the registration of a resource: one parameter, the resource; columns token, lease id.
   * Inside a transaction it reads the latest committed row (a locking read where a snapshot could
   * be older), so that a write the fence refused is classified against the fence that refused it.
   */
  String readFence();

  /** The guarded SQL of one lease. */
  FenceGuards bind(Lease lease);

  /**
   * One registration attempt: registers {@code lease} strictly above the stored token, in a
   * transaction of its own on a connection of {@code dataSource}, waiting at most {@code
   * lockTimeoutMillis} for the fence row.
   *
   * @param endBlockersAfter if not null, stale blockers of the fence row may be ended after this
   * @param commitBoundNanos how long the attempt may take in all, its commit included (a commit
   *     still waiting for a synchronous standby then is ended, where the database can tell)
   * @throws dev.fencing.jdbc.StaleTokenException if the fence holds this token or a higher one for
   *     another lease
   * @throws SQLException if the database failed; {@link #isLockTimeout} tells a lock wait that ran
   *     out
   */
  void registerOnce(
      DataSource dataSource,
      String schema,
      Lease lease,
      long lockTimeoutMillis,
      Duration endBlockersAfter,
      long commitBoundNanos)
      throws SQLException;

  /**
   * Prepares the rows of a guarded batch inside a transaction ({@link
   * GuardedSql.Guarded#batched()}) on {@code connection}, past the plain SQL policy; the database
   * sees the same SQL either way.
   *
   * @param connection the wrapped connection
   * @param sql the batched form of a guarded statement
   * @return the prepared statement
   * @throws SQLException if preparing failed
   */
  default PreparedStatement prepareBatched(Connection connection, String sql) throws SQLException {
    return connection.prepareStatement(sql);
  }

  /** Whether {@code failure} is this database's "the row lock was not granted in time". */
  boolean isLockTimeout(SQLException failure);

  /** The query that returns the contract version installed in a fence schema. */
  String contractQuery(String schema);

  /** Whether {@code failure} of {@link #contractQuery} means the schema holds no migrated fence. */
  boolean isMissingContract(SQLException failure);

  /** One column, the names of the schemas (databases) that hold a migrated fence, sorted. */
  String fenceSchemasQuery();

  /**
   * What plain SQL sent through a fenced connection becomes: read from the catalog of {@code
   * catalog} (left open).
   *
   * @param rewrite whether plain writes of fenced tables are rewritten into their guarded form
   *     where the database allows it ({@code FenceOptions.PlainSql.REWRITE}), or refused
   * @throws SQLException if the catalog could not be read
   */
  PlainSqlGuard plainSqlGuard(
      Connection catalog, String schema, boolean triggerMode, boolean rewrite) throws SQLException;

  /**
   * Refuses options this database cannot honour safely.
   *
   * @throws SQLFeatureNotSupportedException naming the option and why
   */
  void checkOptions(boolean triggerMode) throws SQLFeatureNotSupportedException;

  /**
   * The trigger settings statement: parameters resource, token, lease id, idle timeout; set for the
   * current transaction only.
   *
   * @throws SQLFeatureNotSupportedException if this database has no trigger mode
   */
  String triggerSettings() throws SQLFeatureNotSupportedException;

  /** The rewriting of plain SQL: its guarded form, a refusal, or unchanged. */
  interface PlainSqlGuard {
    /** Decides about one statement of a scope. */
    PlainDmlGuard.Result rewrite(String sql, Lease lease);
  }

  /**
   * The dialect of the database {@code connection} talks to.
   *
   * @param connection an open connection, left open
   * @param schema the fence schema, validated
   * @throws SQLFeatureNotSupportedException if the database is neither PostgreSQL nor MariaDB
   * @throws SQLException if the metadata could not be read
   */
  static FenceDialect of(Connection connection, String schema) throws SQLException {
    String product = connection.getMetaData().getDatabaseProductName();
    return forProduct(product, schema);
  }

  /**
   * The dialect for a product name as {@link java.sql.DatabaseMetaData} reports it.
   *
   * @throws SQLFeatureNotSupportedException if the product is neither PostgreSQL nor MariaDB
   */
  static FenceDialect forProduct(String product, String schema)
      throws SQLFeatureNotSupportedException {
    DatabaseProduct known = DatabaseProduct.fromProductName(product).orElse(null);
    if (known != null) {
      return switch (known) {
        case POSTGRESQL -> new PostgresDialect(schema);
        case MARIADB -> new MariaDbDialect(schema);
      };
    }
    String lower = product == null ? "" : product.toLowerCase(Locale.ROOT);
    throw new SQLFeatureNotSupportedException(
        "fencing speaks PostgreSQL and MariaDB (InnoDB); this database reports itself as \""
            + product
            + "\""
            + (lower.contains("mysql")
                ? " (MySQL 8 is expected to work like MariaDB but has not been tested, so it is"
                    + " refused rather than assumed)"
                : ""),
        "0A000");
  }
}
