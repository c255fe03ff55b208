package dev.fencing.testing;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.internal.ResourceNames;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.jdbc.Fencing;
import dev.fencing.testing.internal.Refusals;
import dev.fencing.testing.internal.TableSnapshots;
import dev.fencing.testing.internal.TableSnapshots.Table;
import dev.fencing.testing.internal.TableSnapshots.TableChange;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Proves that a piece of your code (a DAO call, a repository method, a job step) is fenced: that a
 * paused lease holder's write through it is refused by the database and changes nothing.
 *
 * <p>{@link #check(Code)} runs your code three times against a real database, through your {@link
 * FencedDataSource}, in a {@link Fencing} scope each time:
 *
 * <ol>
 *   <li>as holder A, with a fresh lease registered in the fence: it must work and change a row;
 *   <li>as A again after A's lease expired on the lease server and successor B registered, while A
 *       still believes it holds the lease: it must be refused with a documented exception ({@code
 *       StaleTokenException}, {@code LeaseLostSQLException}, {@code LeaseLostException}, or
 *       Spring's {@code StaleLeaseWriteException}), no row of any table of the probed schemas may
 *       change, and A's lease must end up marked lost;
 *   <li>as B: it must work.
 * </ol>
 *
 * <p>Around the second run it reads every row of every table of the probed schemas (fenced tables,
 * which have a {@code fence_token} column, and the others), so a write to a table you forgot to
 * fence is found too. When something is wrong, {@link #check(Code)} throws an {@link
 * AssertionError} whose message names the tables and rows that changed, the SQL the wrapper sent
 * (if the pool under the {@link FencedDataSource} is a {@link RecordingDataSource}), and how to
 * fence the write. Plain Java: it works from JUnit, TestNG, Spock or a main method.
 *
 * <pre>{@code
 * StaleWriterProbe.on(fencedDataSource).check(as -> billingDao.charge(customerId, 500));
 * }</pre>
 *
 * <p>The leases come from an {@link InMemoryLeaseManager} registered in the data source's fence, on
 * a resource of the probe's own (by default a random one). Your code runs three times, so it must
 * be able to: give it fresh keys per run (the {@link Holder} it gets tells the runs apart) or make
 * it an upsert. The probed schemas must not be written by anything else while the probe runs.
 *
 * <p>Immutable: the {@code with} methods return copies.
 */
public final class StaleWriterProbe {

  /** The most changed rows a report shows per table. */
  public static final int ROWS_SHOWN = 10;

  private static final Duration LEASE_TIME = Duration.ofMinutes(10);

  private final FencedDataSource db;
  private final InMemoryLeaseManager leases;
  private final String resource;
  private final List<String> schemas;
  private final int maxRowsPerTable;

  private StaleWriterProbe(
      FencedDataSource db,
      InMemoryLeaseManager leases,
      String resource,
      List<String> schemas,
      int maxRowsPerTable) {
    this.db = db;
    this.leases = leases;
    this.resource = resource;
    this.schemas = schemas;
    this.maxRowsPerTable = maxRowsPerTable;
  }

  /**
   * Returns a probe of code that writes through {@code db}, on the connection's current schema
   * (PostgreSQL: {@code current_schema()}; MariaDB: the database of the URL), with leases from an
   * in-memory manager of its own on a random resource.
   *
   * @param db the fenced data source your code takes its connections from
   * @return the probe
   * @throws NullPointerException if {@code db} is null
   */
  public static StaleWriterProbe on(FencedDataSource db) {
    Objects.requireNonNull(db, "db");
    return new StaleWriterProbe(
        db,
        null,
        "fencing-probe-" + UUID.randomUUID().toString().substring(0, 8),
        List.of(),
        10_000);
  }

  /**
   * Returns a copy that takes its leases from {@code leases} (for instance the one a {@link
   * FencingTest} hands out) instead of a manager of its own.
   *
   * @param leases the in-memory lease manager
   * @return the new probe
   * @throws NullPointerException if {@code leases} is null
   */
  public StaleWriterProbe withLeases(InMemoryLeaseManager leases) {
    Objects.requireNonNull(leases, "leases");
    return new StaleWriterProbe(db, leases, resource, schemas, maxRowsPerTable);
  }

  /**
   * Returns a copy whose leases are on {@code resource}: needed when your tables are bound to one
   * resource (the enforcement trigger compares tokens per resource).
   *
   * @param resource the resource name
   * @return the new probe
   * @throws IllegalArgumentException if the resource name is invalid
   */
  public StaleWriterProbe withResource(String resource) {
    ResourceNames.validate(resource);
    return new StaleWriterProbe(db, leases, resource, schemas, maxRowsPerTable);
  }

  /**
   * Returns a copy that reads the tables of {@code schemas} (MariaDB: databases) instead of the
   * connection's current schema. The fence's own table is always left out.
   *
   * @param schemas the schemas your code writes
   * @return the new probe
   * @throws IllegalArgumentException if no schema is given
   */
  public StaleWriterProbe withSchemas(String... schemas) {
    if (schemas.length == 0) {
      throw new IllegalArgumentException("name at least one schema");
    }
    return new StaleWriterProbe(db, leases, resource, List.of(schemas), maxRowsPerTable);
  }

  /**
   * Returns a copy that reads at most {@code maxRows} rows per table; a larger table fails the
   * probe (it compares every row).
   *
   * @param maxRows the limit, at least 1
   * @return the new probe
   * @throws IllegalArgumentException if {@code maxRows} is below 1
   */
  public StaleWriterProbe withMaxRowsPerTable(int maxRows) {
    if (maxRows < 1) {
      throw new IllegalArgumentException("maxRows must be at least 1, got " + maxRows);
    }
    return new StaleWriterProbe(db, leases, resource, schemas, maxRows);
  }

  /** Which run of the code this is. */
  public enum Holder {
    /** The first run, as holder A with its lease registered. */
    FIRST_HOLDER,
    /** The second run, as A after successor B registered: must be refused. */
    STALE_HOLDER,
    /** The third run, as successor B: must work. */
    SUCCESSOR
  }

  /** The code under test, run inside a fencing scope. */
  @FunctionalInterface
  public interface Code {
    /**
     * Runs the code once.
     *
     * @param as which run this is; use it for fresh keys if the code cannot run twice alike
     * @throws Exception whatever the code throws
     */
    void run(Holder as) throws Exception;
  }

  /**
   * Runs the probe and throws if the code is not fenced.
   *
   * @param code the code under test
   * @throws AssertionError if the stale run was not refused, changed a row, or left the lease
   *     believed held, or if the first or last run failed or the first changed nothing; the message
   *     says what changed and how to fence it
   * @throws NullPointerException if {@code code} is null
   */
  public void check(Code code) {
    ProbeReport report = run(code);
    if (!report.fenced()) {
      AssertionError failure = new AssertionError(report.describe());
      report.staleRunThrew().ifPresent(failure::initCause);
      throw failure;
    }
  }

  /**
   * Runs the probe and returns its report without throwing.
   *
   * @param code the code under test
   * @return the report
   * @throws NullPointerException if {@code code} is null
   * @throws IllegalStateException if the database could not be read
   */
  public ProbeReport run(Code code) {
    Objects.requireNonNull(code, "code");
    InMemoryLeaseManager own = leases == null ? InMemoryLeaseManager.create() : null;
    InMemoryLeaseManager memory = own != null ? own : leases;
    FencedLeaseManager fenced = new FencedLeaseManager(memory, db.fence());
    try {
      return probe(code, memory, fenced);
    } catch (SQLException e) {
      throw new IllegalStateException("the stale-writer probe could not read the database", e);
    } finally {
      if (own != null) {
        own.close();
      }
    }
  }

  private ProbeReport probe(Code code, InMemoryLeaseManager memory, FencedLeaseManager fenced)
      throws SQLException {
    List<String> findings = new ArrayList<>();
    LeaseRequest request = LeaseRequest.forLeaseTime(LEASE_TIME).withoutRenewal();
    List<Table> tables = tables();

    // 1. as holder A
    Lease first = fenced.acquire(resource, request);
    TableSnapshots beforeFirst = snapshot(tables);
    Optional<Throwable> firstFailed = runAs(first, code, Holder.FIRST_HOLDER);
    TableSnapshots afterFirst = snapshot(tables);
    if (firstFailed.isPresent()) {
      first.close();
      findings.add(
          "The first run, as the lease holder, failed, so the probe cannot tell a refused stale"
              + " write from a failing one: "
              + describe(firstFailed.get())
              + (Refusals.find(firstFailed.get()).isPresent()
                  ? " (a fencing refusal for a holder that holds its lease: are connections taken"
                      + " from the FencedDataSource inside the scope?)"
                  : ""));
      return new ProbeReport(resource, tables, findings, List.of(), List.of(), firstFailed);
    }
    if (afterFirst.diff(beforeFirst, 1).isEmpty()) {
      first.close();
      findings.add(
          "The first run, as the lease holder, changed no row of "
              + schemaNames(tables)
              + ", so the probe cannot show that a stale write changes nothing. Give it code that"
              + " writes, or name the schemas it writes (withSchemas).");
      return new ProbeReport(resource, tables, findings, List.of(), List.of(), Optional.empty());
    }

    // 2. A pauses past its lease time; B acquires and registers; A still believes it holds
    memory.expireNow(resource);
    Lease successor = fenced.acquire(resource, request);
    try {
      TableSnapshots beforeStale = snapshot(tables);
      RecordingDataSource recorder = recorder(db.delegate());
      long mark = recorder == null ? 0 : recorder.mark();
      boolean believedHeld = first.isHeld();
      Optional<Throwable> staleThrew = runAs(first, code, Holder.STALE_HOLDER);
      List<String> sql = recorder == null ? null : recorder.since(mark);
      TableSnapshots afterStale = snapshot(tables);
      List<TableChange> changes = afterStale.diff(beforeStale, ROWS_SHOWN);

      if (!believedHeld) {
        findings.add(
            "The stale holder already knew its lease was lost before its run; the probe needs it"
                + " to believe it still holds the lease.");
      }
      Optional<Throwable> refusal = staleThrew.flatMap(Refusals::find);
      if (staleThrew.isEmpty()) {
        findings.add(
            "The run as the stale holder completed without being refused (if the code acquires"
                + " a lease of its own, such as a @Fenced method, probe the code it runs instead)"
                + (changes.isEmpty()
                    ? ", although it changed no row: the code swallowed the refusal or wrote"
                        + " nothing this time (a stale holder's job must stop when its write is"
                        + " refused)."
                    : "."));
      } else if (refusal.isEmpty()) {
        findings.add(
            "The run as the stale holder failed, but not with a fencing refusal"
                + " (StaleTokenException, LeaseLostSQLException, LeaseLostException or Spring's"
                + " StaleLeaseWriteException anywhere in the cause chain): "
                + describe(staleThrew.get())
                + ". If it cannot run twice alike, use the Holder it gets for fresh keys.");
      }
      for (TableChange change : changes) {
        findings.add(describe(change, sql));
      }
      if (first.isHeld()) {
        findings.add(
            "After the run as the stale holder its lease is still believed held (not marked"
                + " lost): no refusal reached the FencedDataSource"
                + (refusal.isPresent()
                    ? " (the refusal came from the database on a connection the wrapper did not"
                        + " hand out: a connection from the pool itself, one taken before the"
                        + " scope, or unwrap())"
                    : "")
                + ", so the job would go on as if it held the lease.");
      }

      // 3. as successor B
      Optional<Throwable> successorFailed = runAs(successor, code, Holder.SUCCESSOR);
      if (successorFailed.isPresent()) {
        findings.add(
            "The run as the successor, which holds the lease, failed: "
                + describe(successorFailed.get()));
      }
      return new ProbeReport(
          resource, tables, findings, changes, sql == null ? List.of() : sql, staleThrew);
    } finally {
      successor.close();
      first.close();
    }
  }

  private List<Table> tables() throws SQLException {
    try (Connection c = reader().getConnection()) {
      List<Table> tables = TableSnapshots.tables(c, schemas, db.options().schema());
      if (tables.isEmpty()) {
        throw new IllegalStateException(
            "the probed schemas "
                + (schemas.isEmpty() ? "(the connection's current schema)" : schemas)
                + " hold no table: name the schemas your code writes (withSchemas)");
      }
      return tables;
    }
  }

  private TableSnapshots snapshot(List<Table> tables) throws SQLException {
    try (Connection c = reader().getConnection()) {
      return TableSnapshots.take(c, tables, maxRowsPerTable);
    }
  }

  /** The pool itself, outside any scope and unrecorded. */
  private DataSource reader() {
    DataSource pool = db.delegate();
    RecordingDataSource recording = recorder(pool);
    return recording != null ? recording.delegate() : pool;
  }

  /**
   * The recorder under the fenced data source, also behind another wrapper (such as the Spring Boot
   * starter's), or null.
   */
  private static RecordingDataSource recorder(DataSource pool) {
    if (pool instanceof RecordingDataSource recording) {
      return recording;
    }
    try {
      return pool.isWrapperFor(RecordingDataSource.class)
          ? pool.unwrap(RecordingDataSource.class)
          : null;
    } catch (SQLException e) {
      return null;
    }
  }

  private static Optional<Throwable> runAs(Lease lease, Code code, Holder as) {
    try {
      Fencing.run(lease, () -> code.run(as));
      return Optional.empty();
    } catch (Exception | AssertionError e) {
      return Optional.of(e);
    }
  }

  private static String schemaNames(List<Table> tables) {
    return tables.stream().map(Table::schema).distinct().toList().toString();
  }

  private static String describe(Throwable t) {
    StringBuilder out = new StringBuilder(t.toString());
    int depth = 0;
    for (Throwable c = t.getCause(); c != null && c != t && depth < 5; c = c.getCause(), depth++) {
      out.append(" <- caused by ").append(c);
    }
    return out.toString();
  }

  private static String describe(TableChange change, List<String> sql) {
    Table table = change.table();
    StringBuilder out = new StringBuilder();
    out.append("The run as the stale holder changed ")
        .append(change.total())
        .append(change.total() == 1 ? " row" : " rows")
        .append(" of ")
        .append(table.qualified())
        .append(table.fenced() ? " (fenced: has fence_token)" : " (NOT fenced: no fence_token)")
        .append(":");
    for (TableSnapshots.RowChange row : change.changes()) {
      out.append("\n      ").append(row.describe());
    }
    if (change.total() > change.changes().size()) {
      out.append("\n      ... and ")
          .append(change.total() - change.changes().size())
          .append(" more");
    }
    List<String> seen = sql == null ? null : mentioning(sql, table.name());
    boolean outsideScope =
        seen != null
            && !seen.isEmpty()
            && seen.stream().allMatch(s -> s.startsWith(RecordingDataSource.OUTSIDE_SCOPE));
    if (sql == null) {
      out.append(
          "\n    SQL: not recorded (wrap the pool in RecordingDataSource under the"
              + " FencedDataSource to see what the wrapper sent)");
    } else if (seen.isEmpty()) {
      out.append("\n    SQL: the FencedDataSource sent no statement naming ")
          .append(table.name())
          .append(": the write went around it");
    } else {
      out.append("\n    SQL the FencedDataSource sent:");
      seen.stream().limit(5).forEach(s -> out.append("\n      ").append(s));
    }
    Path path =
        sql == null
            ? Path.UNKNOWN
            : seen.isEmpty() ? Path.AROUND : outsideScope ? Path.OUTSIDE_SCOPE : Path.THROUGH;
    out.append("\n    How to fence it: ").append(remedy(table, path));
    return out.toString();
  }

  private static List<String> mentioning(List<String> sql, String table) {
    String name = table.toLowerCase(java.util.Locale.ROOT);
    return sql.stream().filter(s -> s.toLowerCase(java.util.Locale.ROOT).contains(name)).toList();
  }

  /** Whether the write went through the FencedDataSource, as far as the recorded SQL tells. */
  private enum Path {
    AROUND,
    OUTSIDE_SCOPE,
    THROUGH,
    UNKNOWN
  }

  private static final String AROUND_TEXT =
      "the write did not go through the FencedDataSource in the scope (a connection from the pool"
          + " itself or another data source, one taken before Fencing.run, or unwrap() to the"
          + " driver's connection)";

  private static final String THROUGH_TEXT =
      "the statement went through the FencedDataSource unguarded: the plain-SQL rewriter guards"
          + " only the INSERT, UPDATE and DELETE forms it can prove (a stored procedure, a function"
          + " or a trigger of yours writing the table is invisible to it)";

  private static String remedy(Table table, Path path) {
    if (!table.fenced()) {
      return "the table has no fence_token column, so nothing in the database guards it. Fence it"
          + " in the migrations (MigrationOptions.builder().fence(\""
          + table.qualified()
          + "\")): plain SQL through the FencedDataSource is then guarded by the plain-SQL"
          + " rewriter, and GuardedStatements or FencedDsl (jOOQ) write the guard explicitly. On"
          + " PostgreSQL you can enforce it in the database instead (trigger mode:"
          + " .enforce(\""
          + table.qualified()
          + "\", EnforcementMode.STRICT) with FenceOptions.withTriggerMode(true)), which also"
          + " refuses writes from connections the wrapper never saw.";
    }
    if ("lenient".equals(table.enforcement())) {
      return "the table has the enforcement trigger in lenient mode, which lets writes that carry"
          + " no lease through: this one came from a connection that did not carry the lease (one"
          + " from the pool itself or another data source, one taken before Fencing.run, or"
          + " unwrap() to the driver's connection). Take the connection from the FencedDataSource"
          + " (trigger mode: FenceOptions.withTriggerMode(true)) inside the scope, or make the"
          + " trigger strict (EnforcementMode.STRICT), which refuses every write without a lease.";
    }
    if (table.enforced()) {
      return "the table has the enforcement trigger in strict mode, yet the write went through:"
          + " check that the trigger is enabled and that the session does not skip triggers"
          + " (session_replication_role = replica).";
    }
    String how =
        switch (path) {
          case AROUND -> "the table is fenced, but " + AROUND_TEXT + ".";
          case OUTSIDE_SCOPE ->
              "the table is fenced, but the connection was taken from the FencedDataSource"
                  + " outside the fencing scope (on another thread than the one in Fencing.run,"
                  + " or before the scope began), so the wrapper handed it out unfenced.";
          case THROUGH -> "the table is fenced, but " + THROUGH_TEXT + ".";
          case UNKNOWN ->
              "the table is fenced, but either "
                  + AROUND_TEXT
                  + ", or "
                  + THROUGH_TEXT
                  + " (wrap the pool in RecordingDataSource to tell which).";
        };
    return how
        + " Take the connection from the FencedDataSource inside the scope and do not unwrap it;"
        + " write through GuardedStatements or FencedDsl (jOOQ). On PostgreSQL, trigger mode"
        + " (EnforcementMode.STRICT with FenceOptions.withTriggerMode(true)) refuses such writes in"
        + " the database, whatever the connection or the SQL.";
  }
}
