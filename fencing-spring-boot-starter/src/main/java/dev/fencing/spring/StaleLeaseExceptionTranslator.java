package dev.fencing.spring;

import dev.fencing.schema.FenceSchema;
import java.sql.SQLException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.support.PersistenceExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Translates a stale write (SQLState {@code ZF001} anywhere in the cause chain) into {@link
 * StaleLeaseWriteException}, and nothing else: for {@code JdbcTemplate} (the starter puts {@link
 * #before} in front of every {@code JdbcTemplate} bean's own translator) and for
 * {@code @Repository} beans (as a {@link PersistenceExceptionTranslator}, consulted before the JPA
 * provider's own).
 */
public final class StaleLeaseExceptionTranslator
    implements SQLExceptionTranslator, PersistenceExceptionTranslator {

  /**
   * Returns a translator that translates stale writes, and everything else with {@code fallback}.
   *
   * @param fallback the translator for every other exception
   * @return the combined translator
   * @throws NullPointerException if {@code fallback} is null
   */
  public static SQLExceptionTranslator before(SQLExceptionTranslator fallback) {
    Objects.requireNonNull(fallback, "fallback");
    StaleLeaseExceptionTranslator stale = new StaleLeaseExceptionTranslator();
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
    SQLException stale = findStale(ex);
    if (stale == null) {
      return null;
    }
    return new StaleLeaseWriteException(
        task
            + ": write rejected as stale"
            + (sql == null ? "" : " [" + sql + "]")
            + ": "
            + stale.getMessage(),
        ex);
  }

  @Override
  public DataAccessException translateExceptionIfPossible(RuntimeException ex) {
    if (ex instanceof StaleLeaseWriteException already) {
      return already;
    }
    SQLException stale = findStale(ex);
    if (stale == null) {
      return null;
    }
    return new StaleLeaseWriteException("write rejected as stale: " + stale.getMessage(), ex);
  }

  /** Returns the first {@code ZF001} exception among causes and chained SQL exceptions. */
  static SQLException findStale(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof SQLException sql) {
        for (SQLException s = sql;
            s != null && (s == sql || seen.put(s, Boolean.TRUE) == null);
            s = s.getNextException()) {
          if (FenceSchema.SQLSTATE_STALE_TOKEN.equals(s.getSQLState())) {
            return s;
          }
        }
      }
    }
    return null;
  }
}
