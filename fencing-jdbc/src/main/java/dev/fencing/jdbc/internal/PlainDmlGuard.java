package dev.fencing.jdbc.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.internal.ResourceNames;
import dev.fencing.jdbc.PlainSqlRefusedException;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns a DAO's plain SQL into what may run inside a fencing scope: unchanged when it writes no
 * fenced table, its guarded form when it is an UPDATE, DELETE, INSERT or upsert on one fenced table
 * that the rewriter can prove it guards, or a refusal. Never silently unguarded.
 *
 * <p>The guarded form has the same semantics as {@link FenceSql}'s fused guards, per resource: an
 * UPDATE sets {@code fence_token = t, fence_resource = 'R'} and adds {@code AND (fence_token <= t
 * OR fence_resource <> 'R') AND <fence names this registration, FOR SHARE>} to its WHERE; a DELETE
 * adds the same two conditions; an INSERT of one row becomes {@code INSERT ... SELECT <values>, t,
 * 'R' WHERE <fence>}, and its {@code ON CONFLICT DO UPDATE} gets the row guard. On a table without
 * {@code fence_resource} the row guard is {@code fence_token <= t} and no resource is stamped. The
 * statement keeps its {@code ?} parameters in the same order, so the caller binds them as written.
 *
 * <p>Each SQL string is parsed once (bounded cache); a lease fills the cached form's slots.
 * Thread-safe.
 */
public final class PlainDmlGuard {

  /** What to do with a statement. */
  public sealed interface Result permits PassThrough, Guarded, Refused {}

  /** Run the statement as written: it is not DML, or writes no fenced table. */
  public record PassThrough() implements Result, Plan {
    static final PassThrough INSTANCE = new PassThrough();

    @Override
    public Result resolve(Registration registration) {
      return this;
    }
  }

  /**
   * Run {@code sql} instead: the guarded form, with the caller's {@code ?} parameters in the same
   * order. A result of zero rows is ambiguous (stale, or no such row) and is classified like a
   * guarded statement's.
   *
   * @param sql the guarded statement
   */
  public record Guarded(String sql) implements Result {}

  /**
   * Do not run the statement: it writes (or may write) a fenced table in a shape the rewriter
   * cannot prove it guards.
   *
   * @param message names the statement, the reason and the two ways out
   * @param statement the statement as the DAO wrote it
   * @param reason why it is refused
   */
  public record Refused(String message, String statement, String reason) implements Result, Plan {
    @Override
    public Result resolve(Registration registration) {
      return this;
    }

    /** The refusal as the exception a statement throws; nothing was sent to the database. */
    public SQLException toException() {
      return new PlainSqlRefusedException(message, statement, reason);
    }
  }

  /** A cached decision about one SQL string, independent of the lease. */
  interface Plan {
    Result resolve(Registration registration);
  }

  /** Makes the decision about one SQL string. */
  interface Planner {
    Plan plan(String sql);
  }

  /** The two ways out, named in every refusal. */
  public static final String WAYS_OUT =
      "Write it with dev.fencing.jdbc.GuardedStatements (JDBC) or dev.fencing.jdbc.jooq.FencedDsl"
          + " (jOOQ), which add the row guard and the resource fence; or install the enforcement"
          + " trigger on the table (migrations --enforce) and wrap the data source with"
          + " FenceOptions.defaults().withTriggerMode(true).";

  private static final int MAX_QUOTED_STATEMENT = 300;

  static Refused refused(String sql, String reason) {
    StringBuilder statement = new StringBuilder();
    boolean space = false;
    for (int i = 0; i < sql.length() && statement.length() < MAX_QUOTED_STATEMENT; i++) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        space = statement.length() > 0;
      } else {
        if (space) {
          statement.append(' ');
          space = false;
        }
        statement.append(c);
      }
    }
    if (statement.length() >= MAX_QUOTED_STATEMENT) {
      statement.append("...");
    }
    return new Refused(
        "fencing refused to run this statement unguarded inside a fencing scope, because "
            + reason
            + ": \""
            + statement
            + "\". Nothing was sent to the database. "
            + WAYS_OUT,
        sql,
        reason);
  }

  /**
   * The registration a guarded statement must find in the fence, validated so that its parts are
   * safe as SQL literals.
   *
   * @param resource the resource name
   * @param token the fencing token, positive
   * @param leaseId the lease's unique id
   */
  public record Registration(String resource, long token, String leaseId, long idleTimeoutMillis) {
    /**
     * Validates the parts.
     *
     * @throws IllegalArgumentException if the resource name or lease id has characters that could
     *     not be a literal safely, or the token or idle timeout is not positive
     */
    public Registration {
      ResourceNames.validate(resource);
      FenceSql.validLeaseId(leaseId);
      if (token <= 0) {
        throw new IllegalArgumentException("token must be positive, got " + token);
      }
      if (idleTimeoutMillis <= 0) {
        throw new IllegalArgumentException(
            "idle timeout must be positive, got " + idleTimeoutMillis + " ms");
      }
    }

    /**
     * A registration whose transactions get an idle timeout of 30 s (tests of the rewriting).
     *
     * @throws IllegalArgumentException as the canonical constructor
     */
    public Registration(String resource, long token, String leaseId) {
      this(resource, token, leaseId, 30_000);
    }

    /**
     * The registration of a lease.
     *
     * @throws IllegalArgumentException as the constructor
     */
    public static Registration of(Lease lease) {
      Objects.requireNonNull(lease, "lease");
      return new Registration(
          lease.resource(),
          lease.token().value(),
          lease.leaseId(),
          Math.max(1, lease.leaseTime().toMillis()));
    }

    String idleTimeoutLiteral() {
      return "'" + idleTimeoutMillis + "ms'";
    }

    String tokenLiteral() {
      return Long.toString(token);
    }

    String resourceLiteral() {
      return "'" + resource.replace("'", "''") + "'";
    }

    String leaseIdLiteral() {
      return "'" + leaseId.replace("'", "''") + "'";
    }
  }

  /** The default number of SQL strings whose decision is kept. */
  public static final int DEFAULT_CACHE_SIZE = 1024;

  private final Planner planner;
  private final int maxCached;
  private final Map<String, Plan> plans;
  private final AtomicLong planned = new AtomicLong();
  private volatile LastLease lastLease;

  private record LastLease(Lease lease, Registration registration) {}

  /**
   * Creates a guard.
   *
   * @param fenceSchema the schema of the fence table, a plain identifier
   * @param tables the fenced tables
   * @throws IllegalArgumentException if the schema is not a plain identifier
   */
  public PlainDmlGuard(String fenceSchema, FencedTables tables) {
    this(fenceSchema, tables, false, DEFAULT_CACHE_SIZE);
  }

  /**
   * Creates a guard.
   *
   * @param fenceSchema the schema of the fence table, a plain identifier
   * @param tables the fenced tables
   * @param triggerMode whether the connections carry the registration for the enforcement trigger
   *     ({@code FenceOptions.triggerMode()}): plain DML on a table that has the trigger then passes
   *     through, since the trigger checks every row; fenced tables without it are still guarded
   * @param maxCached how many SQL strings' decisions to keep, dropping the least recently used
   * @throws IllegalArgumentException if the schema is not a plain identifier or {@code maxCached}
   *     is not positive
   */
  public PlainDmlGuard(
      String fenceSchema, FencedTables tables, boolean triggerMode, int maxCached) {
    this(fenceSchema, tables, triggerMode, true, maxCached);
  }

  /**
   * Creates a guard.
   *
   * @param fenceSchema the schema of the fence table, a plain identifier
   * @param tables the fenced tables
   * @param triggerMode as in {@link #PlainDmlGuard(String, FencedTables, boolean, int)}
   * @param rewrite whether plain SQL on fenced tables is rewritten into its guarded form (needs
   *     jOOQ); if not, every statement that may write a fenced table (in trigger mode, one without
   *     the trigger) is refused
   * @param maxCached how many SQL strings' decisions to keep
   * @throws IllegalArgumentException if the schema is not a plain identifier or {@code maxCached}
   *     is not positive
   * @throws IllegalStateException if {@code rewrite} and jOOQ cannot be loaded
   */
  public PlainDmlGuard(
      String fenceSchema,
      FencedTables tables,
      boolean triggerMode,
      boolean rewrite,
      int maxCached) {
    this(maxCached, planner(fenceSchema, tables, triggerMode, rewrite));
  }

  /** Why plain SQL cannot be rewritten without jOOQ, and the two ways out. */
  public static final String REWRITER_MISSING =
      "FenceOptions.plainSql() is REWRITE, which rewrites plain SQL on fenced tables into its"
          + " guarded form with jOOQ's parser, but jOOQ (org.jooq:jooq 3.19) cannot be loaded. Add"
          + " it to the class path (or module path), or choose"
          + " FenceOptions.withPlainSql(FenceOptions.PlainSql.REFUSE), which refuses every plain"
          + " statement that may write a fenced table";

  /**
   * Checks that the rewriter can run: jOOQ can be loaded and read by this module.
   *
   * @throws IllegalStateException with {@link #REWRITER_MISSING} if not
   */
  public static void requireRewriter() {
    try {
      DmlRewriter.probe();
    } catch (LinkageError jooqMissing) {
      throw new IllegalStateException(REWRITER_MISSING, jooqMissing);
    }
  }

  private PlainDmlGuard(int maxCached, Planner planner) {
    if (maxCached <= 0) {
      throw new IllegalArgumentException("maxCached must be positive, got " + maxCached);
    }
    this.planner = planner;
    this.maxCached = maxCached;
    this.plans =
        new LinkedHashMap<>(64, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Plan> eldest) {
            return size() > PlainDmlGuard.this.maxCached;
          }
        };
  }

  /**
   * The jOOQ rewriter, or the word screen alone, which refuses every statement that may write a
   * fenced table (in trigger mode, a fenced table without the trigger).
   */
  private static Planner planner(
      String fenceSchema, FencedTables tables, boolean triggerMode, boolean rewrite) {
    Objects.requireNonNull(tables, "tables");
    FenceSql.requireIdentifier("fence schema", fenceSchema);
    if (!rewrite) {
      // In trigger mode the trigger checks every row of the tables that have it.
      return new WriteScreen(
          tables,
          triggerMode ? table -> !table.hasEnforcementTrigger() : table -> true,
          WriteScreen.Folding.POSTGRES,
          "plain SQL is not rewritten (FenceOptions.plainSql() is REFUSE)");
    }
    requireRewriter();
    return new DmlRewriter(fenceSchema, tables, triggerMode);
  }

  /** A guard that only screens, as without jOOQ; for tests. */
  static PlainDmlGuard withoutParser(FencedTables tables) {
    return new PlainDmlGuard(DEFAULT_CACHE_SIZE, new WriteScreen(Objects.requireNonNull(tables)));
  }

  /**
   * Decides what to run for {@code sql} inside a scope whose lease has {@code registration}.
   *
   * @param sql the statement as the DAO wrote it
   * @param registration the scope's registration
   * @return pass through, the guarded SQL, or a refusal
   * @throws NullPointerException if an argument is null
   */
  public Result rewrite(String sql, Registration registration) {
    Objects.requireNonNull(sql, "sql");
    Objects.requireNonNull(registration, "registration");
    return plan(sql).resolve(registration);
  }

  /**
   * As {@link #rewrite(String, Registration)} with the registration of {@code lease}.
   *
   * @throws IllegalArgumentException if the lease's resource or id could not be a literal safely
   */
  public Result rewrite(String sql, Lease lease) {
    Objects.requireNonNull(lease, "lease");
    LastLease last = lastLease;
    if (last == null || last.lease() != lease) {
      last = new LastLease(lease, Registration.of(lease));
      lastLease = last;
    }
    return rewrite(sql, last.registration());
  }

  private Plan plan(String sql) {
    Plan plan;
    synchronized (plans) {
      plan = plans.get(sql);
    }
    if (plan == null) {
      plan = planner.plan(sql);
      planned.incrementAndGet();
      synchronized (plans) {
        plans.put(sql, plan);
      }
    }
    return plan;
  }

  /** How many SQL strings were parsed so far (cache misses), for tests and metrics. */
  public long parsedStatements() {
    return planned.get();
  }

  /** How many decisions are cached now. */
  public int cachedStatements() {
    synchronized (plans) {
      return plans.size();
    }
  }
}
