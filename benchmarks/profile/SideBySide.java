import java.sql.*;
import java.util.*;

public class SideBySide {
  interface Op { void run(Connection c, int i) throws Exception; }
  static final String M = "coalesce(pg_catalog.current_setting('fencing.guard_verified', true) = pg_catalog.pg_current_xact_id()::text || '|job/7/L7', false)";
  static final String M2 = "coalesce(pg_catalog.current_setting('fencing.guard_verified', true) = 'job/7/L7', false)";
  static final String V = "WITH locked AS MATERIALIZED (SELECT f.token, f.lease_id FROM pff.fence f WHERE f.resource = 'job' FOR SHARE OF f) SELECT pg_catalog.set_config('fencing.guard_verified', pg_catalog.pg_current_xact_id()::text || '|job/7/L7', true), set_config('idle_in_transaction_session_timeout', '30000ms', true) FROM locked f WHERE true AND f.token = 7 AND f.lease_id = 'L7'";
  static final String V2 = V.replace("pg_catalog.pg_current_xact_id()::text || '|job/7/L7'", "'job/7/L7'");
  static final String RG = "UPDATE pf.a SET balance = balance + ?, fence_token = 7, fence_resource = 'job' WHERE (id = ?) AND (fence_token <= 7 OR fence_resource <> 'job')";
  static String ex(String lock) { return "EXISTS (SELECT 1 FROM pff.fence f WHERE f.resource = 'job' AND f.token = 7 AND f.lease_id = 'L7' AND set_config('idle_in_transaction_session_timeout', '30000ms', true) IS NOT NULL " + lock + ")"; }
  static final String SETTINGS = "SELECT set_config('fencing.resource', 'job', true), set_config('fencing.token', '7', true), set_config('fencing.lease_id', 'L7', true), set_config('idle_in_transaction_session_timeout', '30000ms', true)";
  static final Random rnd = new Random();

  static Op batch(String verify, String sql) {
    return (c, i) -> {
      c.setAutoCommit(false);
      if (verify != null) try (PreparedStatement v = c.prepareStatement(verify); ResultSet r = v.executeQuery()) { if (!r.next()) throw new IllegalStateException("verify"); }
      try (PreparedStatement s = c.prepareStatement(sql)) {
        int first = (i * 1000) % 98000 + 1;
        for (int k = 0; k < 1000; k++) { s.setLong(1, 1); s.setLong(2, first + k); s.addBatch(); }
        int[] n = s.executeBatch();
        for (int x : n) if (x != 1) throw new IllegalStateException("rows " + x);
      }
      c.commit();
    };
  }
  static Op one(String sql) {
    return (c, i) -> {
      try (PreparedStatement s = c.prepareStatement(sql)) {
        s.setLong(1, rnd.nextInt(1000)); s.setLong(2, rnd.nextInt(99000) + 1);
        if (s.executeUpdate() != 1) throw new IllegalStateException("one");
      }
    };
  }
  static Op trig3() { // current: settings, update, commit
    return (c, i) -> {
      c.setAutoCommit(false);
      try (PreparedStatement st = c.prepareStatement(SETTINGS)) { st.execute(); }
      try (PreparedStatement s = c.prepareStatement("UPDATE pf.t SET balance = ? WHERE id = ?")) {
        s.setLong(1, rnd.nextInt(1000)); s.setLong(2, rnd.nextInt(99000) + 1);
        if (s.executeUpdate() != 1) throw new IllegalStateException("t");
      }
      c.commit(); c.setAutoCommit(true);
    };
  }
  static Op trigMulti() { // one round trip: settings; update in one implicit transaction
    return (c, i) -> {
      try (PreparedStatement s = c.prepareStatement(SETTINGS + "; UPDATE pf.t SET balance = ? WHERE id = ?")) {
        s.setLong(1, rnd.nextInt(1000)); s.setLong(2, rnd.nextInt(99000) + 1);
        s.execute();
        if (!s.getMoreResults() && s.getUpdateCount() != 1) throw new IllegalStateException("tm " + s.getUpdateCount());
      }
    };
  }

  public static void main(String[] a) throws Exception {
    String mode = a[0];
    int rounds = Integer.parseInt(a[1]); int ms = Integer.parseInt(a[2]);
    LinkedHashMap<String, Op> ops = new LinkedHashMap<>();
    String base = "UPDATE pf.a SET balance = balance + ? WHERE id = ?";
    if (mode.equals("batch")) {
      ops.put("plain", batch(null, base));
      ops.put("rg+resource", batch(null, RG));
      ops.put("verify+marker(xid) [now]", batch(V, RG + " AND " + M));
      ops.put("verify+marker(no xid)", batch(V2, RG + " AND " + M2));
      ops.put("verify+CASE marker(xid)", batch(V, "UPDATE pf.a SET balance = balance + ?, fence_token = 7, fence_resource = 'job' WHERE (id = ?) AND CASE WHEN " + M + " THEN (fence_token <= 7 OR fence_resource <> 'job') END"));
      ops.put("verify+EXISTS FOR SHARE", batch(V, RG + " AND " + ex("FOR SHARE OF f")));
    } else if (mode.equals("one")) {
      String b1 = "UPDATE pf.a SET balance = ? WHERE id = ?";
      String rg1 = "UPDATE pf.a SET balance = ?, fence_token = 7, fence_resource = 'job' WHERE (id = ?) AND (fence_token <= 7 OR fence_resource <> 'job')";
      ops.put("plain", one(b1));
      ops.put("rg+resource", one(rg1));
      ops.put("fused FOR SHARE [now]", one(rg1 + " AND (" + M + " OR " + ex("FOR SHARE OF f") + ")"));
      ops.put("fused no marker arm", one(rg1 + " AND " + ex("FOR SHARE OF f")));
      ops.put("fused FOR KEY SHARE", one(rg1 + " AND (" + M + " OR " + ex("FOR KEY SHARE OF f") + ")"));
      ops.put("fused no lock (unsafe)", one(rg1 + " AND (" + M + " OR " + ex("") + ")"));
    } else {
      ops.put("plain no trigger", one("UPDATE pf.a SET balance = ? WHERE id = ?"));
      ops.put("trigger 3 round trips [now]", trig3());
      ops.put("trigger multi-statement 1 rt", trigMulti());
    }
    int threads = a.length > 3 ? Integer.parseInt(a[3]) : 1;
    Map<String, List<Double>> ratios = new LinkedHashMap<>(); Map<String, List<Double>> rates = new LinkedHashMap<>();
    List<String> names = new ArrayList<>(ops.keySet());
    Connection[][] conns = new Connection[names.size()][threads];
    for (int v = 0; v < names.size(); v++) for (int t = 0; t < threads; t++) conns[v][t] = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
    for (int r = -1; r < rounds; r++) {
      double[] rate = new double[names.size()];
      List<Integer> order = new ArrayList<>();
      for (int k = 0; k < names.size(); k++) order.add(k);
      Collections.shuffle(order, new Random(1000L + r)); // a rotation keeps each variant behind the same one
      for (int k = 0; k < names.size(); k++) {
        int v = order.get(k);
        Op op = ops.get(names.get(v));
        long end = System.nanoTime() + (r < 0 ? 800 : ms) * 1_000_000L;
        long[] count = new long[threads];
        Thread[] th = new Thread[threads];
        for (int t = 0; t < threads; t++) { int tt = t; Connection c = conns[v][t];
          th[t] = new Thread(() -> { int i = tt * 37; try { while (System.nanoTime() < end) { op.run(c, i++); count[tt]++; } } catch (Exception e) { throw new RuntimeException(e); } }); th[t].start(); }
        long total = 0; for (int t = 0; t < threads; t++) { th[t].join(); total += count[t]; }
        rate[v] = total * 1000.0 / ms;
      }
      if (r < 0) continue;
      for (int v = 0; v < names.size(); v++) { ratios.computeIfAbsent(names.get(v), x -> new ArrayList<>()).add(rate[v] / rate[0]); rates.computeIfAbsent(names.get(v), x -> new ArrayList<>()).add(rate[v]); }
    }
    for (String n : names) { List<Double> l = ratios.get(n); Collections.sort(l); List<Double> q = rates.get(n); Collections.sort(q);
      System.out.printf("%-32s median ops/s %8.1f  ratio median %.3f  (q1 %.3f q3 %.3f)%n", n, q.get(q.size()/2), l.get(l.size()/2), l.get(l.size()/4), l.get(3*l.size()/4)); }
  }
}
