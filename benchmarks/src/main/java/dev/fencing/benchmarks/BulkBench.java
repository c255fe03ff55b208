package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.internal.GuardedSql;
import dev.fencing.migrations.EnforcementMode;
import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.schema.DatabaseProduct;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Benchmark 5 (issue 13): one {@code UPDATE} of every row of a 100,000-row table in a transaction
 * (rolled back), with and without the enforcement trigger, against trigger designs that bound what
 * any trigger could cost. Each variant has a table of its own, vacuumed before every measured
 * statement, so that no variant pays for another one's dead rows. One statement per variant and
 * round, in a shuffled order; the report's ops/s is statements per second.
 */
final class BulkBench {
  static final String PLAIN = "no trigger";
  static final String TRIGGER = "trigger mode (fencing_enforce, strict), through the library";
  static final String MINIMAL = "floor: minimal PL/pgSQL row trigger (stamps a constant)";
  static final String LOOKUP = "floor: row trigger that looks the fence row up FOR SHARE";
  static final String LOOKUP_DEFINER =
      "floor: the same lookup with the owner's rights and a pinned search_path";
  static final String STATEMENT =
      "not shipped: stamp per row, fence checked once per statement (transition table)";

  static final int ROWS = 100_000;

  private final Env env;
  private final Lease lease;
  private final String settings;

  BulkBench(Env env, Lease lease) {
    this.env = env;
    this.lease = lease;
    this.settings =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, env.fenceSchema).bind(lease).triggerSettings();
  }

  private record Variant(String name, String table, BulkUpdate run) {}

  @FunctionalInterface
  private interface BulkUpdate {
    void run(String table) throws Exception;
  }

  Harness.GroupResult run(Harness.Timing timing) throws Exception {
    setUp();
    List<Variant> variants =
        List.of(
            new Variant(PLAIN, "bulk_plain", this::raw),
            new Variant(TRIGGER, "bulk_trig", this::throughTheLibrary),
            new Variant(MINIMAL, "bulk_min", this::raw),
            new Variant(LOOKUP, "bulk_lookup", this::raw),
            new Variant(LOOKUP_DEFINER, "bulk_lookup_definer", this::raw),
            new Variant(STATEMENT, "bulk_statement", this::raw));
    int n = variants.size();
    if (timing.warmupMillis() >= 500) {
      for (Variant variant : variants) {
        once(variant);
      }
    }
    int rounds = timing.rounds();
    double[][] perSecond = new double[n][rounds];
    long[][] nanos = new long[n][rounds];
    for (int round = 0; round < rounds; round++) {
      for (int i : Harness.order(n, round)) {
        long took = once(variants.get(i));
        nanos[i][round] = took;
        perSecond[i][round] = 1e9 / took;
      }
    }
    List<Harness.VariantResult> results = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] sorted = nanos[i].clone();
      Arrays.sort(sorted);
      results.add(new Harness.VariantResult(variants.get(i).name(), perSecond[i], sorted));
    }
    return new Harness.GroupResult("trigger mode, 100,000-row bulk UPDATE", 1, results);
  }

  /** Vacuums the variant's table, then times one bulk update of it. */
  private long once(Variant variant) throws Exception {
    String table = env.qualified(variant.table());
    env.exec("VACUUM " + table);
    long start = System.nanoTime();
    variant.run().run(table);
    return System.nanoTime() - start;
  }

  private void raw(String table) throws SQLException {
    try (Connection c = env.pool.getConnection()) {
      c.setAutoCommit(false);
      try (Statement s = c.createStatement()) {
        s.execute(settings);
        expectAll(s.executeUpdate(update(table)));
      } finally {
        c.rollback();
        c.setAutoCommit(true);
      }
    }
  }

  private void throughTheLibrary(String table) throws Exception {
    Fencing.run(
        lease,
        () -> {
          try (Connection c = env.triggerDb.getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
              expectAll(s.executeUpdate(update(table)));
            } finally {
              c.rollback();
              c.setAutoCommit(true);
            }
          }
        });
  }

  private static String update(String table) {
    return "UPDATE " + table + " SET balance = balance + 1";
  }

  private static void expectAll(int count) {
    if (count != ROWS) {
      throw new IllegalStateException("expected " + ROWS + " rows updated, got " + count);
    }
  }

  private void setUp() throws SQLException {
    String schema = env.schema;
    String fence = env.fenceSchema + ".fence";
    String resource = "'" + lease.resource() + "'";
    List<String> sql = new ArrayList<>();
    for (String table :
        List.of(
            "bulk_plain",
            "bulk_trig",
            "bulk_min",
            "bulk_lookup",
            "bulk_lookup_definer",
            "bulk_statement")) {
      sql.add(
          "CREATE TABLE "
              + schema
              + "."
              + table
              + " (id bigint PRIMARY KEY, owner text NOT NULL, balance bigint NOT NULL,"
              + " fence_token bigint NOT NULL DEFAULT 0, fence_resource text)");
      sql.add(
          "INSERT INTO "
              + schema
              + "."
              + table
              + " (id, owner, balance) SELECT g, 'owner-' || g, 0 FROM generate_series(1, "
              + ROWS
              + ") g");
    }
    long token = lease.token().value();
    sql.add(
        "CREATE FUNCTION "
            + schema
            + ".bulk_min() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.fence_token := "
            + token
            + "; RETURN NEW; END $$");
    String lookupBody =
        " RETURNS trigger LANGUAGE plpgsql %s AS $$ BEGIN PERFORM 1 FROM "
            + fence
            + " f WHERE f.resource = "
            + resource
            + " FOR SHARE; NEW.fence_token := "
            + token
            + "; RETURN NEW; END $$";
    sql.add("CREATE FUNCTION " + schema + ".bulk_lookup()" + lookupBody.formatted(""));
    sql.add(
        "CREATE FUNCTION "
            + schema
            + ".bulk_lookup_definer()"
            + lookupBody.formatted("SECURITY DEFINER SET search_path = pg_catalog, pg_temp"));
    sql.add(
        "CREATE FUNCTION "
            + schema
            + ".bulk_stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " NEW.fence_token := pg_catalog.current_setting('fencing.token', true)::bigint;"
            + " NEW.fence_resource := pg_catalog.current_setting('fencing.resource', true);"
            + " RETURN NEW; END $$");
    sql.add(
        "CREATE FUNCTION "
            + schema
            + ".bulk_check_statement() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER"
            + " SET search_path = pg_catalog, pg_temp AS $$"
            + " DECLARE v_token bigint := current_setting('fencing.token', true)::bigint;"
            + " v_resource text := current_setting('fencing.resource', true);"
            + " v_lease text := current_setting('fencing.lease_id', true);"
            + " v_current bigint; v_lease_now text;"
            + " BEGIN SELECT f.token, f.lease_id INTO v_current, v_lease_now FROM "
            + fence
            + " f WHERE f.resource = v_resource FOR SHARE;"
            + " IF v_current IS DISTINCT FROM v_token OR v_lease_now IS DISTINCT FROM v_lease"
            + " THEN RAISE EXCEPTION 'stale'; END IF;"
            + " IF EXISTS (SELECT 1 FROM old_rows o WHERE o.fence_token > v_token"
            + " AND (o.fence_resource IS NULL OR o.fence_resource = v_resource))"
            + " THEN RAISE EXCEPTION 'row stale'; END IF;"
            + " RETURN NULL; END $$");
    sql.add(trigger("bulk_min", "bulk_min"));
    sql.add(trigger("bulk_lookup", "bulk_lookup"));
    sql.add(trigger("bulk_lookup_definer", "bulk_lookup_definer"));
    sql.add(trigger("bulk_statement", "bulk_stamp"));
    sql.add(
        "CREATE TRIGGER bulk_check AFTER UPDATE ON "
            + schema
            + ".bulk_statement REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT"
            + " EXECUTE FUNCTION "
            + schema
            + ".bulk_check_statement()");
    env.exec(sql.toArray(String[]::new));
    FencingMigrations.migrate(
        env.pool,
        MigrationOptions.builder()
            .schema(env.fenceSchema)
            .enforce(schema + ".bulk_trig", EnforcementMode.STRICT)
            .build());
  }

  private String trigger(String table, String function) {
    return "CREATE TRIGGER bulk_row BEFORE UPDATE ON "
        + env.schema
        + "."
        + table
        + " FOR EACH ROW EXECUTE FUNCTION "
        + env.schema
        + "."
        + function
        + "()";
  }
}
