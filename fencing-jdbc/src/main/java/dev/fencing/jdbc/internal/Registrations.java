package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/** What the dialects' registrations share. */
final class Registrations {

  private static final Duration MAX_BOUND = Duration.ofNanos(Long.MAX_VALUE / 2);

  private Registrations() {}

  /**
   * Reads the fence with {@code readFence} and throws unless it names {@code lease}.
   *
   * @throws dev.fencing.jdbc.StaleTokenException if the fence names another registration
   */
  static void requireFenceNames(Connection connection, String readFence, Lease lease)
      throws SQLException {
    Rejections.requireFenceNames(connection, readFence, lease);
  }

  /** Whole milliseconds, rounded up, at least 1 and at most {@code Integer.MAX_VALUE}. */
  static long millisRoundedUp(Duration duration) {
    long nanos = duration.compareTo(MAX_BOUND) > 0 ? MAX_BOUND.toNanos() : duration.toNanos();
    long millis = (Math.max(nanos, 1) + 999_999) / 1_000_000;
    return Math.min(millis, Integer.MAX_VALUE);
  }

  static void rollbackQuietly(Connection connection, Exception failure) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
  }

  static void restoreAutoCommit(Connection connection, boolean autoCommit) {
    try {
      connection.setAutoCommit(autoCommit);
    } catch (SQLException ignored) {
      // the connection is broken; the pool discards it
    }
  }
}
