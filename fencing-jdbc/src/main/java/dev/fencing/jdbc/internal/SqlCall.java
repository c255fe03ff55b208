package dev.fencing.jdbc.internal;

import java.sql.SQLException;

/**
 * One call to the driver.
 *
 * @param <T> its result
 */
@FunctionalInterface
public interface SqlCall<T> {
  /**
   * Calls the driver.
   *
   * @return the result
   * @throws SQLException if the driver failed
   */
  T call() throws SQLException;
}
