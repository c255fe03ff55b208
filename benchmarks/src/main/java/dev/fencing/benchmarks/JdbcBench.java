package dev.fencing.benchmarks;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.GuardedStatements;
import dev.fencing.jdbc.internal.FencedTables;
import dev.fencing.jdbc.internal.GuardedSql;
import dev.fencing.jdbc.internal.PlainDmlGuard;
import dev.fencing.jdbc.jooq.FencedDsl;
import dev.fencing.schema.DatabaseProduct;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Benchmarks 2-4 on PostgreSQL through one HikariCP pool: one-row update transactions, 1,000-row
 * batch transactions, and the jOOQ path. Every fenced variant runs inside {@code Fencing.run} with
 * a lease registered in the fence (by {@code FencedLeaseManager}); all threads share that lease, as
 * the workers of one job do.
 */
final class JdbcBench {
  static final String PLAIN = "plain UPDATE";
  static final String ROW_GUARD = "row guard only (hand-written)";
  static final String DEFAULT = "row guard + fence (default)";
  static final String TRIGGER = "trigger mode (plain UPDATE in scope)";
  static final String RAW_FENCED =
      "row guard + fence, raw connection (the library's SQL, no proxy)";
  static final String TRIGGER_FLOOR =
      "trigger floor: the settings and the UPDATE on a minimal row trigger, raw connection";
  static final String RAW_NO_LOCK =
      "the same without FOR SHARE (unsafe: bound of any fence without a row lock)";

  static final String BATCH_PLAIN = "plain batch";
  static final String BATCH_GUARDED = "guarded batch (default)";
  static final String BATCH_TRIGGER = "trigger mode batch";
  static final String BATCH_ROW_GUARD = "row guard only batch (hand-written)";
  static final String BATCH_RAW_GUARDED = "verify + batched SQL, raw connection (no proxy)";
  static final String BATCH_ROW_GUARD_RESOURCE = "row guard + resource stamp batch (hand-written)";

  static final String JDBC_PLAIN = "JDBC plain UPDATE";
  static final String JDBC_GUARDED = "JDBC GuardedStatements.update";
  static final String JOOQ_PLAIN = "jOOQ plain update";
  static final String JOOQ_FENCED = "jOOQ FencedDsl.update";

  static final String REWRITE_PLAIN = "plain UPDATE (pool connection)";
  static final String REWRITE_HAND = "hand-guarded SQL (GuardedSql fused, pool connection)";
  static final String REWRITE_EXECUTE = "PlainDmlGuard.rewrite + execute (pool connection)";
  static final String REWRITE_WRAPPED = "GuardedStatements.update in scope (wrapper)";
  static final String REWRITE_HIT = "rewrite only, cached (no database)";
  static final String REWRITE_MISS = "rewrite only, parse + render (no database)";

  static final int BATCH_ROWS = 1_000;
  private static final int ROWS_PER_THREAD = 1_000;

  private final Env env;
  private final Lease lease;
  private final String accounts;
  private final String accountsTrig;

  JdbcBench(Env env, Lease lease) {
    this.env = env;
    this.lease = lease;
    this.accounts = env.qualified("accounts");
    this.accountsTrig = env.qualified("accounts_trig");
  }

  /** Benchmark 2: one-row UPDATE transactions, auto-commit or an explicit transaction. */
  Harness.GroupResult writes(int threads, boolean explicit, Harness.Timing timing)
      throws Exception {
    String plainSql = "UPDATE " + accounts + " SET balance = ? WHERE id = ?";
    String rowGuardSql =
        "UPDATE "
            + accounts
            + " SET balance = ?, fence_token = ? WHERE id = ? AND fence_token <= ?";
    String triggerSql = "UPDATE " + accountsTrig + " SET balance = ? WHERE id = ?";
    long token = lease.token().value();
    List<Harness.Variant> variants =
        List.of(
            new Harness.Variant(
                PLAIN,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    try (Connection c = env.pool.getConnection()) {
                      begin(c, explicit);
                      try (PreparedStatement s = c.prepareStatement(plainSql)) {
                        s.setLong(1, rows.counter);
                        s.setLong(2, rows.next());
                        expectOne(s.executeUpdate());
                      }
                      commit(c, explicit);
                    }
                  };
                }),
            new Harness.Variant(
                ROW_GUARD,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    try (Connection c = env.pool.getConnection()) {
                      begin(c, explicit);
                      try (PreparedStatement s = c.prepareStatement(rowGuardSql)) {
                        s.setLong(1, rows.counter);
                        s.setLong(2, token);
                        s.setLong(3, rows.next());
                        s.setLong(4, token);
                        expectOne(s.executeUpdate());
                      }
                      commit(c, explicit);
                    }
                  };
                }),
            new Harness.Variant(
                DEFAULT,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.db.getConnection()) {
                              begin(c, explicit);
                              try (PreparedStatement s =
                                  GuardedStatements.update(c, accounts, "balance = ?", "id = ?")) {
                                s.setLong(1, rows.counter);
                                s.setLong(2, rows.next());
                                expectOne(s.executeUpdate());
                              }
                              commit(c, explicit);
                            }
                          });
                }),
            new Harness.Variant(
                TRIGGER,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.triggerDb.getConnection()) {
                              begin(c, explicit);
                              try (PreparedStatement s = c.prepareStatement(triggerSql)) {
                                s.setLong(1, rows.counter);
                                s.setLong(2, rows.next());
                                expectOne(s.executeUpdate());
                              }
                              commit(c, explicit);
                            }
                          });
                }));
    variants = new java.util.ArrayList<>(variants);
    variants.addAll(writeDiagnostics(explicit));
    return Harness.run(
        "one-row update, " + (explicit ? "BEGIN..COMMIT" : "auto-commit"),
        threads,
        timing,
        variants);
  }

  /**
   * What a guarded one-row update sends, on a pool connection without the library's proxies, and
   * the same SQL without its row lock: the first is the floor of the library's default mode, the
   * second bounds any design that reads the fence without locking it (none is safe, see
   * BENCHMARKS.md). Reported, not goals.
   */
  private List<Harness.Variant> writeDiagnostics(boolean explicit) {
    GuardedSql.Bound bound = GuardedSql.of(DatabaseProduct.POSTGRESQL, env.fenceSchema).bind(lease);
    String fenced = bound.update(accounts, "balance = ?", "id = ?").sql();
    String unlocked = fenced.replace(" FOR SHARE OF f)", ")");
    if (unlocked.equals(fenced)) {
      throw new IllegalStateException("no FOR SHARE in the guarded SQL: " + fenced);
    }
    List<Harness.Variant> variants = new java.util.ArrayList<>();
    for (String[] variant : new String[][] {{RAW_FENCED, fenced}, {RAW_NO_LOCK, unlocked}}) {
      String sql = variant[1];
      variants.add(
          new Harness.Variant(
              variant[0],
              thread -> {
                Rows rows = new Rows(thread);
                return () -> {
                  try (Connection c = env.pool.getConnection()) {
                    begin(c, explicit);
                    try (PreparedStatement s = c.prepareStatement(sql)) {
                      s.setLong(1, rows.counter);
                      s.setLong(2, rows.next());
                      expectOne(s.executeUpdate());
                    }
                    commit(c, explicit);
                  }
                };
              }));
    }
    String minimalTrigger =
        bound.triggerSettings()
            + "; UPDATE "
            + env.qualified("accounts_min_trig")
            + " SET balance = ? WHERE id = ?";
    variants.add(
        new Harness.Variant(
            TRIGGER_FLOOR,
            thread -> {
              Rows rows = new Rows(thread);
              return () -> {
                try (Connection c = env.pool.getConnection()) {
                  begin(c, explicit);
                  try (PreparedStatement s = c.prepareStatement(minimalTrigger)) {
                    s.setLong(1, rows.counter);
                    s.setLong(2, rows.next());
                    s.execute();
                    expectOne(updateCountAfterTheSettings(s));
                  }
                  commit(c, explicit);
                }
              };
            }));
    return variants;
  }

  /** The update count of {@code settings; UPDATE}, after the settings' result set. */
  private static int updateCountAfterTheSettings(PreparedStatement s) throws SQLException {
    while (s.getUpdateCount() == -1) {
      if (!s.getMoreResults() && s.getUpdateCount() == -1) {
        return -1;
      }
    }
    return s.getUpdateCount();
  }

  /** Benchmark 3: transactions of 1,000 batched one-row updates. */
  Harness.GroupResult batch(int threads, Harness.Timing timing) throws Exception {
    String plainSql = "UPDATE " + accounts + " SET balance = balance + ? WHERE id = ?";
    String triggerSql = "UPDATE " + accountsTrig + " SET balance = balance + ? WHERE id = ?";
    String rowGuardSql =
        "UPDATE "
            + accounts
            + " SET balance = balance + ?, fence_token = ? WHERE id = ? AND fence_token <= ?";
    // What a guarded batch in a transaction runs (the verify, then the rows' batched form), on a
    // pool connection without the library's proxies: separates the SQL's cost from the wrapper's.
    GuardedSql.Bound fenceSql =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, env.fenceSchema).bind(lease);
    String rawGuardedSql = fenceSql.update(accounts, "balance = balance + ?", "id = ?").batched();
    long token = lease.token().value();
    List<Harness.Variant> variants =
        List.of(
            new Harness.Variant(
                BATCH_PLAIN,
                thread -> {
                  Blocks blocks = new Blocks(thread, threads);
                  return () -> {
                    try (Connection c = env.pool.getConnection()) {
                      c.setAutoCommit(false);
                      try (PreparedStatement s = c.prepareStatement(plainSql)) {
                        fillBatch(s, blocks.next());
                        expectRows(s.executeBatch());
                      }
                      c.commit();
                    }
                  };
                }),
            new Harness.Variant(
                BATCH_GUARDED,
                thread -> {
                  Blocks blocks = new Blocks(thread, threads);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.db.getConnection()) {
                              c.setAutoCommit(false);
                              try (PreparedStatement s =
                                  GuardedStatements.update(
                                      c, accounts, "balance = balance + ?", "id = ?")) {
                                fillBatch(s, blocks.next());
                                expectRows(s.executeBatch());
                              }
                              c.commit();
                            }
                          });
                }),
            new Harness.Variant(
                BATCH_TRIGGER,
                thread -> {
                  Blocks blocks = new Blocks(thread, threads);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.triggerDb.getConnection()) {
                              c.setAutoCommit(false);
                              try (PreparedStatement s = c.prepareStatement(triggerSql)) {
                                fillBatch(s, blocks.next());
                                expectRows(s.executeBatch());
                              }
                              c.commit();
                            }
                          });
                }));
    variants = new java.util.ArrayList<>(variants);
    variants.addAll(batchDiagnostics(threads, rowGuardSql, rawGuardedSql, token, fenceSql));
    return Harness.run("billing batch, 1,000 rows/tx", threads, timing, variants);
  }

  /** Variants that split the cost of the guarded batch; reported, not goals. */
  private List<Harness.Variant> batchDiagnostics(
      int threads,
      String rowGuardSql,
      String rawGuardedSql,
      long token,
      GuardedSql.Bound fenceSql) {
    return List.of(
        new Harness.Variant(
            BATCH_ROW_GUARD,
            thread -> {
              Blocks blocks = new Blocks(thread, threads);
              return () -> {
                try (Connection c = env.pool.getConnection()) {
                  c.setAutoCommit(false);
                  try (PreparedStatement s = c.prepareStatement(rowGuardSql)) {
                    long first = blocks.next();
                    for (int i = 0; i < BATCH_ROWS; i++) {
                      s.setLong(1, 1);
                      s.setLong(2, token);
                      s.setLong(3, first + i);
                      s.setLong(4, token);
                      s.addBatch();
                    }
                    expectRows(s.executeBatch());
                  }
                  c.commit();
                }
              };
            }),
        new Harness.Variant(
            BATCH_ROW_GUARD_RESOURCE,
            thread -> {
              Blocks blocks = new Blocks(thread, threads);
              String sql =
                  "UPDATE "
                      + accounts
                      + " SET balance = balance + ?, fence_token = ?, fence_resource = ?"
                      + " WHERE (id = ?) AND (fence_token <= ? OR fence_resource <> ?)";
              return () -> {
                try (Connection c = env.pool.getConnection()) {
                  c.setAutoCommit(false);
                  try (PreparedStatement s = c.prepareStatement(sql)) {
                    long first = blocks.next();
                    for (int i = 0; i < BATCH_ROWS; i++) {
                      s.setLong(1, 1);
                      s.setLong(2, token);
                      s.setString(3, lease.resource());
                      s.setLong(4, first + i);
                      s.setLong(5, token);
                      s.setString(6, lease.resource());
                      s.addBatch();
                    }
                    expectRows(s.executeBatch());
                  }
                  c.commit();
                }
              };
            }),
        new Harness.Variant(
            BATCH_RAW_GUARDED,
            thread -> {
              Blocks blocks = new Blocks(thread, threads);
              return () -> {
                try (Connection c = env.pool.getConnection()) {
                  c.setAutoCommit(false);
                  try (PreparedStatement verify = c.prepareStatement(fenceSql.verify())) {
                    verify.execute();
                  }
                  try (PreparedStatement s = c.prepareStatement(rawGuardedSql)) {
                    fillBatch(s, blocks.next());
                    expectRows(s.executeBatch());
                  }
                  c.commit();
                }
              };
            }));
  }

  /** Benchmark 4: the jOOQ path against the hand-guarded JDBC statement (auto-commit). */
  Harness.GroupResult jooq(int threads, Harness.Timing timing) throws Exception {
    FencedDsl fenced = new FencedDsl(env.fenceOptions);
    DSLContext fencedCtx = DSL.using(env.db, SQLDialect.POSTGRES);
    DSLContext plainCtx = DSL.using(env.pool, SQLDialect.POSTGRES);
    Table<?> table = DSL.table(DSL.name(env.schema, "accounts"));
    Field<Long> id = DSL.field(DSL.name(env.schema, "accounts", "id"), SQLDataType.BIGINT);
    Field<Long> balance = DSL.field(DSL.name("balance"), SQLDataType.BIGINT);
    String plainSql = "UPDATE " + accounts + " SET balance = ? WHERE id = ?";
    List<Harness.Variant> variants =
        List.of(
            new Harness.Variant(
                JDBC_PLAIN,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    try (Connection c = env.pool.getConnection();
                        PreparedStatement s = c.prepareStatement(plainSql)) {
                      s.setLong(1, rows.counter);
                      s.setLong(2, rows.next());
                      expectOne(s.executeUpdate());
                    }
                  };
                }),
            new Harness.Variant(
                JDBC_GUARDED,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.db.getConnection();
                                PreparedStatement s =
                                    GuardedStatements.update(
                                        c, accounts, "balance = ?", "id = ?")) {
                              s.setLong(1, rows.counter);
                              s.setLong(2, rows.next());
                              expectOne(s.executeUpdate());
                            }
                          });
                }),
            new Harness.Variant(
                JOOQ_PLAIN,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    long value = rows.counter;
                    expectOne(
                        plainCtx
                            .update(table)
                            .set(balance, value)
                            .where(id.eq(rows.next()))
                            .execute());
                  };
                }),
            new Harness.Variant(
                JOOQ_FENCED,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            long value = rows.counter;
                            expectOne(
                                fenced.update(
                                    fencedCtx, table, Map.of(balance, value), id.eq(rows.next())));
                          });
                }));
    return Harness.run("jOOQ vs JDBC, auto-commit", threads, timing, variants);
  }

  /**
   * Issue 16: a DAO's plain one-row UPDATE rewritten into its guarded form by {@link
   * PlainDmlGuard}, executed on a pool connection, against the same UPDATE written by hand with
   * {@link GuardedSql}'s fused guards and the plain UPDATE (auto-commit). The two "rewrite only"
   * variants time the rewrite alone: a cache hit (what every statement after the first pays) and a
   * miss (parse and render, paid once per SQL string).
   */
  Harness.GroupResult rewrite(int threads, Harness.Timing timing) throws Exception {
    FencedTables tables;
    try (Connection c = env.pool.getConnection()) {
      tables = FencedTables.read(c);
    }
    PlainDmlGuard guard = new PlainDmlGuard(env.fenceSchema, tables);
    String plainSql = "UPDATE " + accounts + " SET balance = ? WHERE id = ?";
    String handSql =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, env.fenceSchema)
            .bind(lease)
            .update(accounts, "balance = ?", "id = ?")
            .sql();
    if (!(guard.rewrite(plainSql, lease) instanceof PlainDmlGuard.Guarded)) {
      throw new IllegalStateException("the rewriter did not guard " + plainSql);
    }
    List<Harness.Variant> variants =
        List.of(
            new Harness.Variant(
                REWRITE_PLAIN,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    try (Connection c = env.pool.getConnection();
                        PreparedStatement s = c.prepareStatement(plainSql)) {
                      s.setLong(1, rows.counter);
                      s.setLong(2, rows.next());
                      expectOne(s.executeUpdate());
                    }
                  };
                }),
            new Harness.Variant(
                REWRITE_HAND,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    try (Connection c = env.pool.getConnection();
                        PreparedStatement s = c.prepareStatement(handSql)) {
                      s.setLong(1, rows.counter);
                      s.setLong(2, rows.next());
                      expectOne(s.executeUpdate());
                    }
                  };
                }),
            new Harness.Variant(
                REWRITE_EXECUTE,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () -> {
                    String sql = ((PlainDmlGuard.Guarded) guard.rewrite(plainSql, lease)).sql();
                    try (Connection c = env.pool.getConnection();
                        PreparedStatement s = c.prepareStatement(sql)) {
                      s.setLong(1, rows.counter);
                      s.setLong(2, rows.next());
                      expectOne(s.executeUpdate());
                    }
                  };
                }),
            new Harness.Variant(
                REWRITE_WRAPPED,
                thread -> {
                  Rows rows = new Rows(thread);
                  return () ->
                      Fencing.run(
                          lease,
                          () -> {
                            try (Connection c = env.db.getConnection();
                                PreparedStatement s =
                                    GuardedStatements.update(
                                        c, accounts, "balance = ?", "id = ?")) {
                              s.setLong(1, rows.counter);
                              s.setLong(2, rows.next());
                              expectOne(s.executeUpdate());
                            }
                          });
                }),
            new Harness.Variant(
                REWRITE_HIT,
                thread ->
                    () -> {
                      if (!(guard.rewrite(plainSql, lease) instanceof PlainDmlGuard.Guarded)) {
                        throw new IllegalStateException("not guarded");
                      }
                    }),
            new Harness.Variant(
                REWRITE_MISS,
                thread ->
                    () -> {
                      PlainDmlGuard fresh = new PlainDmlGuard(env.fenceSchema, tables);
                      if (!(fresh.rewrite(plainSql, lease) instanceof PlainDmlGuard.Guarded)) {
                        throw new IllegalStateException("not guarded");
                      }
                    }));
    return Harness.run("plain SQL rewrite, auto-commit", threads, timing, variants);
  }

  private static void begin(Connection c, boolean explicit) throws SQLException {
    if (explicit) {
      c.setAutoCommit(false);
    }
  }

  private static void commit(Connection c, boolean explicit) throws SQLException {
    if (explicit) {
      c.commit();
    }
  }

  private static void fillBatch(PreparedStatement s, long firstId) throws SQLException {
    for (int i = 0; i < BATCH_ROWS; i++) {
      s.setLong(1, 1);
      s.setLong(2, firstId + i);
      s.addBatch();
    }
  }

  private static void expectOne(int count) {
    if (count != 1) {
      throw new IllegalStateException("expected one row updated, got " + count);
    }
  }

  private static void expectRows(int[] counts) {
    int total = 0;
    for (int count : counts) {
      total += count;
    }
    if (counts.length != BATCH_ROWS || total != BATCH_ROWS) {
      throw new IllegalStateException("batch updated " + total + " rows in " + counts.length);
    }
  }

  /** The rows one thread updates in turn: its own 1,000. */
  private static final class Rows {
    private final long first;
    long counter;

    Rows(int thread) {
      this.first = (long) thread * ROWS_PER_THREAD + 1;
    }

    long next() {
      return first + (counter++ % ROWS_PER_THREAD);
    }
  }

  /** The 1,000-row blocks one thread updates in turn; threads never share a block. */
  private static final class Blocks {
    private final int thread;
    private final int threads;
    private long counter;

    Blocks(int thread, int threads) {
      this.thread = thread;
      this.threads = threads;
    }

    long next() {
      int blocks = Env.ROWS / BATCH_ROWS;
      int perThread = Math.max(1, blocks / threads);
      long block = (long) thread * perThread + (counter++ % perThread);
      return block * BATCH_ROWS + 1;
    }
  }
}
