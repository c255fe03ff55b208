package dev.fencing.spring;

import dev.fencing.jdbc.StaleTokenException;
import java.util.Optional;
import org.springframework.dao.NonTransientDataAccessException;

/**
 * A write rejected because its lease is stale: a newer holder registered in the fence (SQLState
 * {@code ZF001}), or the lease was already known lost. Retrying cannot succeed; the transaction
 * rolls back.
 */
public class StaleLeaseWriteException extends NonTransientDataAccessException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message the message
   * @param cause the rejection reported by the driver or by fencing-jdbc
   */
  public StaleLeaseWriteException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Returns fencing-jdbc's description of the rejection (resource, attempted and current token),
   * when the rejection went through a fenced connection.
   */
  public Optional<StaleTokenException> staleToken() {
    for (Throwable t = getCause(); t != null; t = t.getCause()) {
      if (t instanceof StaleTokenException stale) {
        return Optional.of(stale);
      }
    }
    return Optional.empty();
  }
}
