package dev.fencing.jdbc;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.internal.FenceClassifier;
import dev.fencing.jdbc.internal.FenceSql;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.Objects;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * The resource fence in PostgreSQL: per resource, the token and lease id of the holder registered
 * last. A holder registers right after acquiring, and only with a token strictly above the stored
 * one; from then on, writes guarded by an older registration are rejected.
 *
 * <p>Registration waits for in-flight guarded writes of the previous holder (they hold the fence
 * row {@code FOR SHARE} until they commit), retrying under {@code lock_timeout} until {@link
 * FenceOptions#registrationTimeout()}.
 */
public final class ResourceFence {

  private static final String LOCK_NOT_AVAILABLE = "55P03";

  private final DataSource dataSource;
  private final FenceOptions options;
  private final FenceSql sql;

  /**
   * Creates the fence.
   *
   * @param dataSource connections to the database holding the fence table (not a fenced one)
   * @param options the fence options
   * @throws NullPointerException if an argument is null
   */
  public ResourceFence(DataSource dataSource, FenceOptions options) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.options = Objects.requireNonNull(options, "options");
    this.sql = new FenceSql(options.schema());
  }

  /** Returns the options. */
  public FenceOptions options() {
    return options;
  }

  /**
   * Registers {@code lease} as the resource's current holder.
   *
   * @param lease a freshly acquired lease
   * @throws StaleTokenException if the fence already holds this token or a higher one for another
   *     lease (Redis handed out a token the database has seen: see {@link FencedLeaseManager})
   * @throws SQLTimeoutException if the fence row stayed locked for the whole registration timeout
   * @throws SQLException if the database failed
   * @throws dev.fencing.core.LeaseLostException if the lease is already known lost
   * @throws NullPointerException if {@code lease} is null
   */
  public void register(Lease lease) throws SQLException {
    Objects.requireNonNull(lease, "lease");
    lease.checkHeld();
    long deadline = System.nanoTime() + options.registrationTimeout().toNanos();
    SQLException lastTimeout;
    do {
      try {
        registerOnce(lease);
        return;
      } catch (SQLException e) {
        if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
          throw e;
        }
        lastTimeout = e;
        lease.checkHeld();
      }
    } while (System.nanoTime() - deadline < 0);
    throw new SQLTimeoutException(
        "registering token "
            + lease.token()
            + " for \""
            + lease.resource()
            + "\" waited longer than "
            + options.registrationTimeout()
            + " for the fence row: a previous holder's transaction still holds it",
        LOCK_NOT_AVAILABLE,
        lastTimeout);
  }

  /**
   * Returns the token registered for {@code resource}, if any.
   *
   * @param resource the resource
   * @return the registered token
   * @throws SQLException if the database failed
   */
  public OptionalLong currentToken(String resource) throws SQLException {
    Objects.requireNonNull(resource, "resource");
    try (Connection connection = dataSource.getConnection();
        PreparedStatement read = connection.prepareStatement(sql.readFence())) {
      read.setString(1, resource);
      try (ResultSet row = read.executeQuery()) {
        return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  private void registerOnce(Lease lease) throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      try {
        try (PreparedStatement timeout =
            connection.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
          timeout.setString(1, options.registrationLockTimeout().toMillis() + "ms");
          timeout.execute();
        }
        boolean registered;
        try (PreparedStatement register = connection.prepareStatement(sql.register())) {
          register.setString(1, lease.resource());
          register.setLong(2, lease.token().value());
          register.setString(3, lease.leaseId());
          try (ResultSet row = register.executeQuery()) {
            registered = row.next();
          }
        }
        if (!registered) {
          long current = 0;
          String currentLease = null;
          try (PreparedStatement read = connection.prepareStatement(sql.readFence())) {
            read.setString(1, lease.resource());
            try (ResultSet row = read.executeQuery()) {
              if (row.next()) {
                current = row.getLong(1);
                currentLease = row.getString(2);
              }
            }
          }
          // registered already by this very lease (a retry after a lost reply): not a refusal
          FenceClassifier.requireNoSuchRow(lease, current, currentLease);
        }
        connection.commit();
      } catch (SQLException | RuntimeException e) {
        rollbackQuietly(connection, e);
        throw e;
      } finally {
        restoreAutoCommit(connection, autoCommit);
      }
    }
  }

  private static void rollbackQuietly(Connection connection, Exception failure) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  private static void restoreAutoCommit(Connection connection, boolean autoCommit) {
    try {
      connection.setAutoCommit(autoCommit);
    } catch (SQLException ignored) {
      // the connection is broken; the pool discards it
    }
  }
}
