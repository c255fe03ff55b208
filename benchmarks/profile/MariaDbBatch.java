import java.sql.*;
import java.util.*;

/**
 * MariaDB 1,000-row batch shapes side by side on the scratch databases of benchmarks/profile/mariadb-setup.sql (table
 * mdbp.a, fence mdbpf.fence: resource 'job', token 7, lease 'L7'). Every variant runs on its own
 * connection (its own URL options), in a shuffled order per round; prints the median per-round
 * ratio to "plain text". Variants marked unsafe only split the cost.
 *
 * <p>java -cp benchmarks/target/benchmarks.jar benchmarks/profile/MariaDbBatch.java ROUNDS MS [FILTER]
 */
public class MariaDbBatch {
  interface Op { void run(Connection c, int i) throws Exception; }

  static final String BASE = "jdbc:mariadb://127.0.0.1:3306/mdbp?user=root";
  static final String SET = "UPDATE mdbp.a SET balance = balance + ?, `fence_token` = 7, `fence_resource` = 'job'";
  static final String RG = " WHERE (id = ?) AND (`fence_token` <= 7 OR `fence_resource` <> 'job')";
  static final String FENCE_WHERE = "f.resource = 'job' AND f.token = 7 AND f.lease_id = 'L7'";
  static final String EXISTS = " AND EXISTS (SELECT 1 FROM `mdbpf`.`fence` f WHERE " + FENCE_WHERE + " LOCK IN SHARE MODE)";
  static final String GUARDED = SET + RG + EXISTS;
  static final String PLAIN = "UPDATE mdbp.a SET balance = balance + ? WHERE id = ?";
  static final String VERIFY = "SELECT 1 FROM `mdbpf`.`fence` f WHERE " + FENCE_WHERE + " LOCK IN SHARE MODE";

  static Op batch(String verify, String sql, boolean expectOne) {
    return (c, i) -> {
      c.setAutoCommit(false);
      if (verify != null) try (Statement v = c.createStatement(); ResultSet r = v.executeQuery(verify)) { if (!r.next()) throw new IllegalStateException("verify"); }
      try (PreparedStatement s = c.prepareStatement(sql)) {
        int first = (i * 1000) % 9000 + 1;
        for (int k = 0; k < 1000; k++) { s.setLong(1, 1); s.setLong(2, first + k); s.addBatch(); }
        int[] n = s.executeBatch();
        if (expectOne) for (int x : n) if (x != 1 && x != Statement.SUCCESS_NO_INFO) throw new IllegalStateException("rows " + x);
      }
      c.commit();
    };
  }

  record V(String name, String url, Op op) {}

  public static void main(String[] a) throws Exception {
    int rounds = Integer.parseInt(a[0]); int ms = Integer.parseInt(a[1]);
    String filter = a.length > 2 ? a[2] : "";
    String sp = BASE + "&useServerPrepStmts=true";
    String bulk = sp + "&useBulkStmts=true";
    String marker = "m" + System.nanoTime();
    List<V> vs = new ArrayList<>();
    vs.add(new V("plain text", BASE, batch(null, PLAIN, true)));
    vs.add(new V("guarded text (as shipped)", BASE, batch(null, GUARDED, true)));
    vs.add(new V("row guard + stamp only, text (unsafe)", BASE, batch(null, SET + RG, true)));
    vs.add(new V("guarded text, no LOCK IN SHARE MODE (unsafe)", BASE, batch(null, GUARDED.replace(" LOCK IN SHARE MODE", ""), true)));
    vs.add(new V("plain server-prepared", sp, batch(null, PLAIN, true)));
    vs.add(new V("guarded server-prepared", sp, batch(null, GUARDED, true)));
    vs.add(new V("plain bulk", bulk, batch(null, PLAIN, false)));
    vs.add(new V("guarded bulk", bulk, batch(null, GUARDED, false)));
    vs.add(new V("row guard only bulk (unsafe)", bulk, batch(null, SET + RG, false)));
    // join on the fence row as a derived table with the lock clause
    String joinD = "UPDATE mdbp.a JOIN (SELECT 1 AS fencing_held FROM `mdbpf`.`fence` f WHERE " + FENCE_WHERE + " LOCK IN SHARE MODE) fh SET balance = balance + ?, `fence_token` = 7, `fence_resource` = 'job'" + RG;
    vs.add(new V("join derived fence row, text", BASE, batch(null, joinD, true)));
    vs.add(new V("join derived fence row, server-prepared", sp, batch(null, joinD, true)));
    vs.add(new V("guarded server-prepared, subquery IN form", sp, batch(null, SET + RG + " AND 1 IN (SELECT 1 FROM `mdbpf`.`fence` f WHERE " + FENCE_WHERE + " LOCK IN SHARE MODE)", true)));
    vs.add(new V("row guard + stamp only, server-prepared (unsafe)", sp, batch(null, SET + RG, true)));
    // fence_token <= ? first, EXISTS last (shape variant)
    vs.add(new V("guarded text, subquery IN form", BASE, batch(null, SET + RG + " AND 1 IN (SELECT 1 FROM `mdbpf`.`fence` f WHERE " + FENCE_WHERE + " LOCK IN SHARE MODE)", true)));
    vs.add(new V("locking verify + user variable per row (unsafe)", BASE,
        batch(VERIFY.replace("SELECT 1 ", "SELECT @fv := '" + marker + "' "), SET + RG + " AND @fv = '" + marker + "'", true)));
    vs.add(new V("locking verify + innodb_trx per row", BASE,
        batch("SELECT @fv := (SELECT trx_id FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()) FROM (" + VERIFY + ") v",
            SET + RG + " AND @fv = (SELECT trx_id FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID())", true)));
    vs.removeIf(v -> !v.name.equals("plain text") && !filter.isEmpty() && !v.name.matches(".*(" + filter + ").*"));
    Map<String, Connection> cs = new HashMap<>();
    for (V v : vs) { Connection c = DriverManager.getConnection(v.url); cs.put(v.name, c); for (int i = 0; i < 3; i++) v.op.run(c, i); }
    Map<String, List<Double>> ratios = new LinkedHashMap<>();
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    for (V v : vs) { ratios.put(v.name, new ArrayList<>()); rates.put(v.name, new ArrayList<>()); }
    for (int r = 0; r < rounds; r++) {
      List<V> order = new ArrayList<>(vs); Collections.shuffle(order, new Random(r));
      Map<String, Double> rate = new HashMap<>();
      for (V v : order) {
        Connection c = cs.get(v.name);
        long end = System.nanoTime() + ms * 1_000_000L; int n = 0; long t0 = System.nanoTime();
        while (System.nanoTime() < end) v.op.run(c, n++);
        rate.put(v.name, n * 1e9 / (System.nanoTime() - t0));
      }
      for (V v : vs) { ratios.get(v.name).add(rate.get(v.name) / rate.get("plain text")); rates.get(v.name).add(rate.get(v.name)); }
    }
    for (V v : vs) {
      List<Double> l = ratios.get(v.name); Collections.sort(l);
      List<Double> q = rates.get(v.name); Collections.sort(q);
      System.out.printf("%-52s ratio %.2f  (min %.2f max %.2f)  %.1f batches/s%n", v.name, l.get(l.size() / 2), l.get(0), l.get(l.size() - 1), q.get(q.size() / 2));
    }
  }
}
