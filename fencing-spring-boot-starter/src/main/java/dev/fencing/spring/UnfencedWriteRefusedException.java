package dev.fencing.spring;

import dev.fencing.spring.internal.BootRefusals;
import java.sql.SQLException;
import java.util.IdentityHashMap;
import java.util.Map;
import org.springframework.dao.InvalidDataAccessApiUsageException;

/**
 * Fencing refused to run a write because it could not fence it, and nothing was sent to the
 * database (or, for a strictly enforced table, the enforcement trigger refused it). Three cases,
 * each a mistake in how the write is made, not a stale holder:
 *
 * <ul>
 *   <li>plain SQL on a fenced table, inside a scope, that the default mode cannot rewrite into its
 *       guarded form (or any such SQL, with {@code fencing.plain-sql=refuse});
 *   <li>a write on a strictly enforced table (SQLState {@code ZF003}) from a connection that does
 *       not carry the registration for the trigger ({@code fencing.trigger-mode} off);
 *   <li>a write on a fenced table outside any fencing scope, with {@code
 *       fencing.unscoped-writes=refuse} (a self-invoked {@code @Fenced} method, for one).
 * </ul>
 *
 * <p>The message quotes the statement and says which {@code fencing.*} property or API makes it
 * work. Retrying cannot succeed: it is a {@link InvalidDataAccessApiUsageException}.
 */
public class UnfencedWriteRefusedException extends InvalidDataAccessApiUsageException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was refused and what to do instead
   * @param cause the library's or the database's refusal
   */
  public UnfencedWriteRefusedException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Returns {@code failure} as an {@link UnfencedWriteRefusedException} if its cause chain holds
   * such a refusal, else null; an {@code UnfencedWriteRefusedException} is returned as it is.
   *
   * @param failure the failure
   * @return the translation, or null
   */
  public static UnfencedWriteRefusedException translate(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof UnfencedWriteRefusedException already) {
        return already;
      }
      if (t instanceof SQLException sql) {
        String message = BootRefusals.forBoot(sql);
        if (message != null) {
          return new UnfencedWriteRefusedException(message, failure);
        }
      }
    }
    return null;
  }
}
