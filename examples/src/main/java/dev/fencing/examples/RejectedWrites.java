package dev.fencing.examples;

import dev.fencing.jdbc.StaleTokenException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The replay's record of stale writes, in the {@code rejected_writes} table of the billing schema:
 * one row per write transaction that failed with SQLSTATE {@code ZF001}, written in a transaction
 * of its own on the plain pool. {@code rejected_by} says who refused it: {@code database} when the
 * database refused the statement it ran (the enforcement trigger's error on PostgreSQL, or a
 * guarded statement whose fence check let nothing through, which fencing-jdbc reports as {@link
 * StaleTokenException}), {@code client} for any other {@code ZF001} (a lease fencing-jdbc already
 * knows lost is refused before sending, as {@code LeaseLostException}, so the replay has none).
 */
public final class RejectedWrites implements BillingJob.StaleWriteListener {

  private final DataSource pool;
  private final String insertSql;
  private final String period;

  /**
   * @param pool a plain (unfenced) pool on the database holding {@code schema}
   * @param database which database that is
   * @param schema the billing schema
   * @param period the period being billed
   */
  public RejectedWrites(DataSource pool, BillingDatabase database, String schema, String period) {
    this.pool = Objects.requireNonNull(pool);
    this.period = Objects.requireNonNull(period);
    this.insertSql =
        "INSERT INTO "
            + database.quote(schema)
            + ".rejected_writes (period, run_id, customer_id, "
            + database.quote("sqlstate")
            + ", resource, attempted_token, current_token, rejected_by, message)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
  }

  @Override
  public void rejected(String runId, Customer customer, SQLException e) throws SQLException {
    StaleTokenException stale = e instanceof StaleTokenException s ? s : null;
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(insertSql)) {
      ps.setString(1, period);
      ps.setString(2, runId);
      ps.setLong(3, customer.id());
      ps.setString(4, String.valueOf(e.getSQLState()));
      ps.setString(5, stale == null ? null : stale.resource());
      setLongOrNull(ps, 6, stale == null ? 0 : stale.attemptedToken());
      setLongOrNull(ps, 7, stale == null ? 0 : stale.currentToken());
      ps.setString(8, fromDatabase(e) ? "database" : "client");
      ps.setString(9, ServerException.firstLine(e));
      ps.executeUpdate();
    }
  }

  /**
   * True if the database refused the write: a {@link StaleTokenException} (fencing-jdbc reports
   * only the database's verdict that way: the server's {@code ZF001}, or a guarded statement that
   * the database ran and whose fence check matched nothing), or a {@code ZF001} the driver created.
   */
  static boolean fromDatabase(SQLException e) {
    if (e instanceof StaleTokenException) {
      return true;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql
          && !(t instanceof StaleTokenException)
          && StaleTokenException.SQL_STATE.equals(sql.getSQLState())) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private static void setLongOrNull(PreparedStatement ps, int index, long value)
      throws SQLException {
    if (value > 0) {
      ps.setLong(index, value);
    } else {
      ps.setNull(index, Types.BIGINT);
    }
  }
}
