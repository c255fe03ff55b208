package dev.fencing.it;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the history a run left in the database and checks the promise of the design: per resource,
 *
 * <ul>
 *   <li><b>token-decrease</b>: in commit order (the ledger's {@code seq}: every step read the last
 *       committed {@code seq} and wrote {@code seq + 1}), tokens of accepted writes never decrease;
 *   <li><b>stale-accepted</b>: no accepted write carries a token lower than the highest token
 *       registered for its resource when the write ran (recorded by a trigger on the ledger from
 *       the registration history, itself recorded by a trigger on the fence table);
 *   <li><b>not-registered-holder</b>: the write's lease is the one registered last (this catches
 *       two holders with the same token, as after a Redis fail-over);
 *   <li><b>duplicate-seq</b> / <b>gap</b>: the ledger is 1..n without duplicate or hole;
 *   <li><b>seq-mismatch</b>: the resource's stored {@code seq} equals the ledger's last entry.
 * </ul>
 *
 * <p>With fencing off, a worker's acquisition stands in for its registration.
 */
final class Checker {

  /** Violations per kind (every kind present, zero or not), with a few examples. */
  record Result(Map<String, Long> violations, List<String> examples, long accepted) {
    long total() {
      return violations.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  private Checker() {}

  static Result check(Connection c, String schema) throws SQLException {
    Map<String, Long> violations = new LinkedHashMap<>();
    List<String> examples = new ArrayList<>();
    String ledger = schema + ".ledger";
    count(
        c,
        violations,
        examples,
        "token-decrease",
        "SELECT resource, seq, token, prev FROM (SELECT resource, seq, token, lag(token) OVER"
            + " (PARTITION BY resource ORDER BY seq, id) AS prev FROM "
            + ledger
            + ") x WHERE token < prev ORDER BY resource, seq");
    count(
        c,
        violations,
        examples,
        "stale-accepted",
        "SELECT resource, seq, token, registered_max FROM "
            + ledger
            + " WHERE token < registered_max ORDER BY resource, seq");
    count(
        c,
        violations,
        examples,
        "not-registered-holder",
        "SELECT resource, seq, token, lease_id, registered_lease FROM "
            + ledger
            + " WHERE registered_lease IS DISTINCT FROM lease_id ORDER BY resource, seq");
    count(
        c,
        violations,
        examples,
        "duplicate-seq",
        "SELECT resource, seq, count(*), string_agg(token::text || '/' || attempt, ',') FROM "
            + ledger
            + " GROUP BY resource, seq HAVING count(*) > 1 ORDER BY resource, seq");
    count(
        c,
        violations,
        examples,
        "gap",
        "SELECT resource, count(DISTINCT seq), min(seq), max(seq) FROM "
            + ledger
            + " GROUP BY resource HAVING min(seq) <> 1 OR max(seq) <> count(DISTINCT seq)");
    count(
        c,
        violations,
        examples,
        "seq-mismatch",
        "SELECT r.resource, r.seq, l.max_seq FROM "
            + schema
            + ".resources r LEFT JOIN (SELECT resource, max(seq) AS max_seq FROM "
            + ledger
            + " GROUP BY resource) l ON l.resource = r.resource WHERE r.seq <> coalesce(l.max_seq,"
            + " 0)");
    long accepted;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + ledger)) {
      rs.next();
      accepted = rs.getLong(1);
    }
    return new Result(violations, examples, accepted);
  }

  private static void count(
      Connection c, Map<String, Long> violations, List<String> examples, String kind, String sql)
      throws SQLException {
    long n = 0;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      int columns = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        n++;
        if (n <= 3 && examples.size() < 12) {
          StringBuilder row = new StringBuilder(kind).append(':');
          for (int i = 1; i <= columns; i++) {
            row.append(' ').append(rs.getMetaData().getColumnLabel(i)).append('=');
            row.append(rs.getString(i));
          }
          examples.add(row.toString());
        }
      }
    }
    violations.put(kind, n);
  }
}
