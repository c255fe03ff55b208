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
 * Reads the history a run left in the database and checks the promise of the design. Every accepted
 * write (a ledger row, an item, a shared row) is judged against the registrations committed before
 * <b>its commit</b>, as recorded by {@link ChaosSchema}'s deferred trigger on PostgreSQL and by
 * {@link MariaDbChaos}'s commit clock on MariaDB (both give the rows of {@code judged}):
 *
 * <ul>
 *   <li><b>stale-accepted</b>: the write's token is lower than a token registered for its resource
 *       before the write committed;
 *   <li><b>not-registered-holder</b>: the write's lease is not the one registered last before the
 *       write committed (a superseded holder, or two holders with the same token as after a Redis
 *       fail-over);
 *   <li><b>token-decrease</b>: in ledger order ({@code seq}: every step read the last committed
 *       {@code seq} and wrote {@code seq + 1}), a token lower than the previous step's;
 *   <li><b>duplicate-seq</b> / <b>gap</b>: the ledger is not exactly 1..n;
 *   <li><b>seq-mismatch</b>: a resource's stored {@code seq} is not its ledger's last entry;
 *   <li><b>row-token-mismatch</b>: a row's {@code fence_token} (where the table has one) is not the
 *       token of the write that produced the row.
 * </ul>
 *
 * <p>With fencing off, a worker's acquisition stands in for its registration.
 */
final class Checker {

  /** Kinds found in the database, in report order. */
  static final List<String> KINDS =
      List.of(
          "stale-accepted",
          "not-registered-holder",
          "token-decrease",
          "duplicate-seq",
          "gap",
          "seq-mismatch",
          "row-token-mismatch");

  /** Violations per kind (every kind present, zero or not), with a few examples. */
  record Result(Map<String, Long> violations, List<String> examples, long accepted) {
    long total() {
      return violations.values().stream().mapToLong(Long::longValue).sum();
    }

    long count(String kind) {
      return violations.getOrDefault(kind, 0L);
    }

    /** This result with violations found outside the database (from the workers' events). */
    Result plus(String kind, List<String> found) {
      Map<String, Long> v = new LinkedHashMap<>(violations);
      v.merge(kind, (long) found.size(), Long::sum);
      List<String> e = new ArrayList<>(examples);
      found.stream().limit(3).forEach(x -> e.add(kind + ": " + x));
      return new Result(Map.copyOf(v), List.copyOf(e), accepted);
    }
  }

  private Checker() {}

  static Result check(Connection c, String schema) throws SQLException {
    return check(c, schema, PostgresChaos.INSTANCE);
  }

  /**
   * Checks the history of {@code schema} on {@code database} (the queries below are portable
   * between PostgreSQL and MariaDB), plus {@code database}'s checks of its own history recorder.
   */
  static Result check(Connection c, String schema, ChaosDatabase database) throws SQLException {
    Map<String, Long> violations = new LinkedHashMap<>();
    List<String> examples = new ArrayList<>();
    String ledger = schema + ".ledger";
    String judged = schema + ".judged";
    count(
        c,
        violations,
        examples,
        "stale-accepted",
        "SELECT tbl, resource, item, token, registered_max, attempt FROM "
            + judged
            + " WHERE token < registered_max ORDER BY id");
    count(
        c,
        violations,
        examples,
        "not-registered-holder",
        "SELECT tbl, resource, item, token, lease_id, registered_lease, attempt FROM "
            + judged
            + " WHERE registered_lease IS NULL OR registered_lease <> lease_id ORDER BY id");
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
        "duplicate-seq",
        "SELECT resource, seq, count(*), min(attempt), max(attempt) FROM "
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
    List<String> stamped = new ArrayList<>();
    for (String table : List.of("ledger", "items", "shared")) {
      if (hasFenceToken(c, schema, table)) {
        stamped.add(
            "SELECT '"
                + table
                + "' AS tbl, resource, token, fence_token, attempt FROM "
                + schema
                + "."
                + table
                + " WHERE fence_token IS NULL OR fence_token <> token");
      }
    }
    if (stamped.isEmpty()) {
      violations.put("row-token-mismatch", 0L);
    } else {
      count(c, violations, examples, "row-token-mismatch", String.join(" UNION ALL ", stamped));
    }
    for (Map.Entry<String, String> recorder : database.recorderChecks(schema).entrySet()) {
      count(c, violations, examples, recorder.getKey(), recorder.getValue());
    }
    long accepted;
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + ledger)) {
      rs.next();
      accepted = rs.getLong(1);
    }
    return new Result(violations, examples, accepted);
  }

  private static boolean hasFenceToken(Connection c, String schema, String table)
      throws SQLException {
    try (var s =
        c.prepareStatement(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = ? AND table_name = ?"
                + " AND column_name = 'fence_token'")) {
      s.setString(1, schema);
      s.setString(2, table);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next();
      }
    }
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
        if (n <= 3 && examples.size() < 14) {
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
