package dev.fencing.examples;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * What the database says about one billing period, read after the runs: the replay's numbers come
 * from here, never from counters inside the job. The query is SQL that PostgreSQL and MariaDB both
 * accept.
 *
 * @param activeCustomers active customers
 * @param charges charge rows for the period
 * @param customersCharged distinct customers with at least one charge for the period
 * @param customersChargedTwice customers with more than one charge for the period
 * @param activeNotCharged active customers without a charge for the period
 * @param staleWritesRejected rows in {@code rejected_writes} for the period that the database
 *     refused ({@code rejected_by = 'database'}), see {@link RejectedWrites}
 */
public record BillingStats(
    long activeCustomers,
    long charges,
    long customersCharged,
    long customersChargedTwice,
    long activeNotCharged,
    long staleWritesRejected) {

  /** Queries the billing tables in {@code schema}. */
  public static BillingStats query(DataSource dataSource, String schema, String period)
      throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      return query(c, BillingDatabase.of(c).quote(schema), period);
    }
  }

  private static BillingStats query(Connection c, String s, String period) throws SQLException {
    String sql =
        "WITH per_customer AS ("
            + " SELECT customer_id, count(*) AS n FROM "
            + s
            + ".charges WHERE period = ? GROUP BY customer_id)"
            + " SELECT (SELECT count(*) FROM "
            + s
            + ".customers WHERE active),"
            + " (SELECT coalesce(sum(n), 0) FROM per_customer),"
            + " (SELECT count(*) FROM per_customer),"
            + " (SELECT count(*) FROM per_customer WHERE n > 1),"
            + " (SELECT count(*) FROM "
            + s
            + ".customers c WHERE c.active"
            + "   AND NOT EXISTS (SELECT 1 FROM per_customer p WHERE p.customer_id = c.id)),"
            + " (SELECT count(*) FROM "
            + s
            + ".rejected_writes WHERE period = ? AND rejected_by = 'database')";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, period);
      ps.setString(2, period);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new BillingStats(
            rs.getLong(1),
            rs.getLong(2),
            rs.getLong(3),
            rs.getLong(4),
            rs.getLong(5),
            rs.getLong(6));
      }
    }
  }
}
