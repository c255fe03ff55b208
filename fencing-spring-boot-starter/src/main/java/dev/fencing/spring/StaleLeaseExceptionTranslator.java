package dev.fencing.spring;

import java.sql.SQLException;
import java.util.Objects;
import java.util.function.Consumer;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Translates "no longer the holder" into {@link StaleLeaseWriteException}: a {@code ZF001} ({@link
 * dev.fencing.jdbc.StaleTokenException}, the database refused) or {@code ZF004} ({@link
 * dev.fencing.jdbc.LeaseLostSQLException}, the JVM refused) SQL exception, or a {@link
 * dev.fencing.core.LeaseLostException}, anywhere in the cause chain. The starter registers it for
 * {@code JdbcTemplate} beans (in front of each template's own translator, see {@link #before}), for
 * {@code @Repository} beans and Spring Data repositories (as a {@link
 * PersistenceExceptionTranslator}, consulted before the JPA provider's own), for the transaction
 * managers' commits and for the boundaries of {@code @Transactional} and {@code @Fenced} methods.
 * Fencing's refusals of writes it cannot fence (plain SQL it cannot rewrite, a strictly enforced
 * table without trigger mode, a write outside any scope with {@code
 * fencing.unscoped-writes=refuse}) become {@link UnfencedWriteRefusedException}, whose message
 * names the {@code fencing.*} properties. Everything else is left to the next translator.
 */
public final class StaleLeaseExceptionTranslator
    implements SQLExceptionTranslator, PersistenceExceptionTranslator {

  private final Consumer<? super StaleLeaseWriteException> onTranslated;

  /** Creates the translator. */
  public StaleLeaseExceptionTranslator() {
    this(translated -> {});
  }

  /**
   * Creates a translator that reports each exception it translates.
   *
   * @param onTranslated told of every {@link StaleLeaseWriteException} this translator creates (not
   *     of one it is given already translated); the starter counts the JVM's refusals with it
   * @throws NullPointerException if {@code onTranslated} is null
   */
  public StaleLeaseExceptionTranslator(Consumer<? super StaleLeaseWriteException> onTranslated) {
    this.onTranslated = Objects.requireNonNull(onTranslated, "onTranslated");
  }

  /**
   * Returns a translator that translates stale writes, and everything else with {@code fallback}.
   *
   * @param fallback the translator for every other exception
   * @return the combined translator
   * @throws NullPointerException if {@code fallback} is null
   */
  public static SQLExceptionTranslator before(SQLExceptionTranslator fallback) {
    return new StaleLeaseExceptionTranslator().withFallback(fallback);
  }

  /**
   * Returns a translator that translates stale writes with this translator, and everything else
   * with {@code fallback}.
   *
   * @param fallback the translator for every other exception
   * @return the combined translator
   * @throws NullPointerException if {@code fallback} is null
   */
  public SQLExceptionTranslator withFallback(SQLExceptionTranslator fallback) {
    Objects.requireNonNull(fallback, "fallback");
    StaleLeaseExceptionTranslator stale = this;
    return new SQLExceptionTranslator() {
      @Override
      public DataAccessException translate(String task, String sql, SQLException ex) {
        DataAccessException translated = stale.translate(task, sql, ex);
        return translated != null ? translated : fallback.translate(task, sql, ex);
      }

      @Override
      public String toString() {
        return "stale writes, then " + fallback;
      }
    };
  }

  @Override
  public DataAccessException translate(String task, String sql, SQLException ex) {
    return translateFencing(task, sql, ex);
  }

  @Override
  public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
    return translateFencing(null, null, ex);
  }

  /**
   * Returns {@code failure} as a {@link StaleLeaseWriteException} if its cause chain holds a
   * refusal ("no longer the holder", as {@link #translateAny}), as an {@link
   * UnfencedWriteRefusedException} if it holds fencing's refusal of a write it cannot fence (its
   * message then names the {@code fencing.*} properties), else null.
   *
   * @param task what was being done, or null
   * @param sql the SQL, or null
   * @param failure the failure
   * @return the translation, or null
   */
  public DataAccessException translateFencing(String task, String sql, Throwable failure) {
    StaleLeaseWriteException stale = translateAny(task, sql, failure);
    return stale != null ? stale : UnfencedWriteRefusedException.translate(failure);
  }

  /**
   * Returns {@code failure} as a {@link StaleLeaseWriteException} if its cause chain holds a
   * refusal, else null, as {@link #translate(String, String, Throwable)} does, reporting a new
   * translation to this translator's listener.
   *
   * @param task what was being done, or null
   * @param sql the SQL, or null
   * @param failure the failure
   * @return the translation, or null
   */
  public StaleLeaseWriteException translateAny(String task, String sql, Throwable failure) {
    StaleLeaseWriteException translated = translate(task, sql, failure);
    if (translated != null && translated != failure) {
      onTranslated.accept(translated);
    }
    return translated;
  }

  /**
   * Returns {@code failure} as a {@link StaleLeaseWriteException} if its cause chain holds a
   * refusal ("no longer the holder"), else null; a {@code StaleLeaseWriteException} is returned as
   * it is.
   *
   * @param task what was being done (as in {@link SQLExceptionTranslator#translate}), or null
   * @param sql the SQL, or null
   * @param failure the failure
   * @return the translation, or null
   */
  public static StaleLeaseWriteException translate(String task, String sql, Throwable failure) {
    if (failure instanceof StaleLeaseWriteException already) {
      return already;
    }
    Throwable refusal = StaleLeaseWriteException.findRefusal(failure);
    if (refusal == null) {
      return null;
    }
    String what =
        StaleLeaseWriteException.whoRefused(refusal) == StaleLeaseWriteException.RefusedBy.JVM
            ? "write refused before reaching the database: this instance is no longer the"
                + " holder (the lease is known lost)"
            : "write rejected as stale by the database: this instance is no longer the holder";
    return new StaleLeaseWriteException(
        (task == null ? "" : task + ": ")
            + what
            + (sql == null ? "" : " [" + sql + "]")
            + ": "
            + refusal.getMessage(),
        failure);
  }
}
