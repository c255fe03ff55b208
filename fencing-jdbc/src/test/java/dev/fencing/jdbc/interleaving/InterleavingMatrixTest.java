package dev.fencing.jdbc.interleaving;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.fencing.jdbc.interleaving.InterleavingDb.Holders;
import dev.fencing.jdbc.interleaving.InterleavingDb.Registration;
import dev.fencing.jdbc.interleaving.InterleavingDb.RowState;
import dev.fencing.jdbc.interleaving.Session.Outcome;
import dev.fencing.jdbc.interleaving.StatementKind.Rows;
import dev.fencing.jdbc.interleaving.StatementKind.Step;
import dev.fencing.schema.FenceSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.TestFactory;

/**
 * The interleaving suite: a stale writer (token t, its lock expired unnoticed) and its successor
 * (token t + 1, registering on its own connection), step by step, over the product of
 *
 * <ul>
 *   <li>{@link StatementKind}: guarded update, delete, insert, upsert, a JDBC batch, a batch then a
 *       single statement, {@code FencedDsl}, trigger-mode plain SQL on a strict and on a lenient
 *       table;
 *   <li>{@link TransactionShape}: auto-commit, {@code commit()}, SQL-text {@code COMMIT} and {@code
 *       ROLLBACK}, a savepoint rolled back (API and SQL text), continuing after a rejection,
 *       returned to the pool with auto-commit off, commit on and writes through the unwrapped
 *       driver connection;
 *   <li>{@link Phase} of the registration relative to the stale write: committed before the
 *       writer's transaction, in flight (its UPDATE done, not committed) while the write runs, or
 *       committed between the writer's prime and its write;
 *   <li>{@link Isolation}: READ COMMITTED, REPEATABLE READ, SERIALIZABLE;
 *   <li>{@link Layout}: the contested rows never written by another resource, or last written by
 *       resource Y's holder with token {@value InterleavingDb#OTHER_RESOURCE_TOKEN};
 *   <li>{@link StaleWriter}: the holder with the older token, or (registration first, READ
 *       COMMITTED, one resource only) a holder with the successor's token and another lease id.
 * </ul>
 *
 * <p>Each cell runs twice. <b>Fenced</b>, it checks by reading the database:
 *
 * <ol>
 *   <li>no write of the stale holder commits after the registration commits (the registrar
 *       snapshots the cell's rows inside its own transaction just before committing, and the rows
 *       must be exactly that after the stale session ended);
 *   <li>every stale write that completes after the registration committed is rejected with an
 *       exception (a 0-row "no such row" answer is a misleading success);
 *   <li>the holder's writes while it is the registered holder (its prime) are neither refused nor
 *       dropped (0 rows where the row exists);
 *   <li>the successor, running the same kind and shape, is neither refused nor dropped, and its
 *       rows hold what it wrote;
 *   <li>the pool never lends an unscoped connection that still carries a lease's trigger settings.
 * </ol>
 *
 * <b>Fencing off</b> (the control), the same steps run with plain SQL on unfenced connections and
 * must show a stale write committed after the registration: proof that the cell can fail.
 *
 * <p>Synchronisation is by observable state only: the steps of a session run one by one on one
 * thread; a statement expected to block is awaited in {@code pg_stat_activity} until it waits for a
 * lock (or finished), with a timeout that fails the test. A summary of every cell is written to
 * {@code target/interleaving-matrix.txt}.
 */
class InterleavingMatrixTest {

  /** When the successor's registration happens relative to the stale writer's session. */
  enum Phase {
    BEFORE("registered before the writer's transaction"),
    IN_FLIGHT("registration in flight during the write"),
    COMMITTED("registered between the writer's prime and its write");

    final String label;

    Phase(String label) {
      this.label = label;
    }
  }

  enum Isolation {
    READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED, "READ COMMITTED"),
    REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ, "REPEATABLE READ"),
    SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE, "SERIALIZABLE");

    final int level;
    final String label;

    Isolation(int level, String label) {
      this.level = level;
      this.label = label;
    }
  }

  /** Who wrote the contested rows last before the holders of resource X. */
  enum Layout {
    ONE_RESOURCE("one resource"),
    TWO_RESOURCES("two resources (rows last written under Y)");

    final String label;

    Layout(String label) {
      this.label = label;
    }
  }

  /** Who the stale writer is. */
  enum StaleWriter {
    OLDER_TOKEN("stale holder with token t"),
    /**
     * The successor's token with another lease id: only the fence's lease id can stop it, and it
     * was never registered, so it runs in the phase where the registration comes first only, at one
     * isolation level and layout.
     */
    SAME_TOKEN_OTHER_LEASE("holder with token t + 1 and another lease id");

    final String label;

    StaleWriter(String label) {
      this.label = label;
    }

    boolean appliesTo(Phase phase, Isolation isolation, Layout layout) {
      return this == OLDER_TOKEN
          || (phase == Phase.BEFORE
              && isolation == Isolation.READ_COMMITTED
              && layout == Layout.ONE_RESOURCE);
    }
  }

  record Cell(
      Backend backend,
      StatementKind kind,
      TransactionShape shape,
      Phase phase,
      Isolation isolation,
      Layout layout,
      StaleWriter staleWriter) {
    String name() {
      return String.join(
          " · ",
          backend.label,
          kind.label,
          shape.label,
          phase.label,
          isolation.label,
          layout.label,
          staleWriter.label);
    }
  }

  static Stream<Cell> cells() {
    List<Cell> cells = new ArrayList<>();
    for (Backend backend : backends())
      for (StatementKind kind : StatementKind.values()) {
        for (TransactionShape shape : TransactionShape.values()) {
          if (!shape.appliesTo(kind) || !backend.appliesTo(kind)) {
            continue;
          }
          for (Phase phase : Phase.values()) {
            for (Isolation isolation : Isolation.values()) {
              for (Layout layout : Layout.values()) {
                for (StaleWriter stale : StaleWriter.values()) {
                  if (stale.appliesTo(phase, isolation, layout)) {
                    cells.add(new Cell(backend, kind, shape, phase, isolation, layout, stale));
                  }
                }
              }
            }
          }
        }
      }
    return cells.stream();
  }

  /**
   * The backends to run, {@code -Dfencing.test.backends=postgres,mariadb} (default both): one
   * matrix, two backends.
   */
  static List<Backend> backends() {
    List<Backend> backends = new ArrayList<>();
    for (String name : System.getProperty("fencing.test.backends", "postgres,mariadb").split(",")) {
      backends.add(Backend.valueOf(name.trim().toUpperCase(Locale.ROOT)));
    }
    return backends;
  }

  private static final Map<Backend, InterleavingDb> DBS = new java.util.EnumMap<>(Backend.class);
  private static InterleavingDb db;

  /** The cell's backend becomes the current one (cells run one at a time). */
  private static void use(Backend backend) {
    db = DBS.computeIfAbsent(backend, InterleavingDb::new);
  }

  private static ExecutorService writerThread;
  private static long runs;
  private static final Map<String, String> SUMMARY = new ConcurrentSkipListMap<>();

  @BeforeAll
  static void setUp() {
    writerThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "interleaving-writer"));
  }

  @AfterAll
  static void tearDown() throws IOException {
    if (writerThread != null) {
      writerThread.shutdownNow();
    }
    DBS.values().forEach(InterleavingDb::close);
    long failed = SUMMARY.values().stream().filter(line -> line.startsWith("FAIL")).count();
    List<String> lines = new ArrayList<>();
    lines.add(
        "# interleaving matrix: "
            + SUMMARY.size()
            + " runs ("
            + SUMMARY.size() / 2
            + " cells, fenced and control), "
            + failed
            + " failed");
    SUMMARY.forEach(
        (name, result) -> lines.add(result.substring(0, 4) + " | " + name + result.substring(4)));
    Path out = Path.of("target", "interleaving-matrix.txt");
    Files.createDirectories(out.getParent());
    Files.write(out, lines);
  }

  @TestFactory
  Stream<DynamicContainer> everyInterleavingOfAStaleWriterAndItsSuccessor() {
    return cells()
        .map(
            cell ->
                dynamicContainer(
                    cell.name(),
                    Stream.of(
                        dynamicTest(
                            "fenced: no stale write commits, the current holder is accepted",
                            () -> fenced(cell)),
                        dynamicTest(
                            "fencing off (control): a stale write commits after the registration",
                            () -> control(cell)))));
  }

  // ------------------------------------------------------------------ the two runs of a cell

  private static void fenced(Cell cell) throws Exception {
    use(cell.backend());
    List<String> violations = new ArrayList<>();
    Session stale;
    Session current;
    try (Holders holders = db.holders()) {
      Rows rows = nextRows();
      String table = db.table(cell.kind().fencedTable);
      seed(cell, table, rows, holders);
      Registration registration = db.registration(holders);
      stale =
          new Session(
              db,
              cell.kind(),
              cell.shape(),
              cell.isolation().level,
              cell.staleWriter() == StaleWriter.OLDER_TOKEN
                  ? holders.stale()
                  : holders.sameTokenOtherLease(),
              false,
              rows,
              registration::committed);
      Map<Long, RowState> atRegistration = runStale(cell, stale, registration, table, rows);
      Map<Long, RowState> afterStale = db.rows(table, rows.base(), rows.last());
      for (String change : changes(atRegistration, afterStale)) {
        violations.add("a stale write committed after the registration: " + change);
      }
      for (Outcome o : stale.outcomes()) {
        if (o.isWrite() && o.afterRegistration() && o.error() == null) {
          violations.add(
              "stale "
                  + o.what()
                  + " completed after the registration without being rejected: returned "
                  + Arrays.toString(o.counts())
                  + " rows");
        }
        if (!o.afterRegistration() && !refusedAsLeaseless(cell, o)) {
          refusedOrDropped("the holder (still registered) ", o).ifPresent(violations::add);
        }
      }
      db.settingsLeftInPool()
          .ifPresent(
              left ->
                  violations.add(
                      "after the stale session, the pool lends an unscoped connection still"
                          + " carrying "
                          + left));

      current =
          new Session(
              db,
              cell.kind(),
              cell.shape(),
              cell.isolation().level,
              holders.successor(),
              true,
              rows,
              () -> true);
      runCurrent(current);
      for (Outcome o : current.outcomes()) {
        if (!refusedAsLeaseless(cell, o)) {
          refusedOrDropped("the current holder's ", o).ifPresent(violations::add);
        }
      }
      if (!cell.shape().writesThroughDriver()) {
        violations.addAll(currentHoldersRows(cell, current, table, rows, holders));
      }
      db.settingsLeftInPool()
          .ifPresent(
              left ->
                  violations.add(
                      "after the current holder's session, the pool lends an unscoped connection"
                          + " still carrying "
                          + left));
    }
    if (violations.isEmpty()) {
      SUMMARY.put(cell.name() + " | fenced", "ok  ");
      return;
    }
    String report =
        violations.stream().distinct().collect(Collectors.joining("\n  - ", "\n  - ", ""))
            + "\n  stale session:   "
            + stale.outcomes()
            + "\n  current session: "
            + current.outcomes();
    SUMMARY.put(cell.name() + " | fenced", "FAIL |" + report.replace("\n", " "));
    fail(cell.name() + report);
  }

  private static void control(Cell cell) throws Exception {
    use(cell.backend());
    try (Holders holders = db.holders()) {
      Rows rows = nextRows();
      String table = db.table("items");
      seed(cell, table, rows, holders);
      Registration registration = db.registration(holders);
      Session stale =
          new Session(
              db,
              cell.kind(),
              cell.shape(),
              cell.isolation().level,
              null,
              false,
              rows,
              registration::committed);
      Map<Long, RowState> atRegistration = runStale(cell, stale, registration, table, rows);
      List<String> changes = changes(atRegistration, db.rows(table, rows.base(), rows.last()));
      if (changes.isEmpty()) {
        SUMMARY.put(cell.name() + " | control", "FAIL | the control saw no violation");
        fail(
            cell.name()
                + ": with fencing off, a stale write should have committed after the"
                + " registration, but the rows did not change (the cell cannot fail); session: "
                + stale.outcomes());
      }
      SUMMARY.put(cell.name() + " | control", "ok  ");
    }
  }

  // ------------------------------------------------------------------ scripts

  /**
   * The stale session's script, with the registration placed by the cell's phase.
   *
   * @return the cell's rows as the registration committed them
   */
  private static Map<Long, RowState> runStale(
      Cell cell, Session s, Registration registration, String table, Rows rows) throws Exception {
    Map<Long, RowState> atRegistration = null;
    try {
      onWriter(s, () -> s.open());
      if (cell.phase() == Phase.BEFORE) {
        atRegistration = registration.startAndCommit(table, rows.base(), rows.last());
      } else {
        onWriter(s, s::prime);
      }
      if (cell.phase() == Phase.COMMITTED) {
        atRegistration = registration.startAndCommit(table, rows.base(), rows.last());
      }
      onWriter(s, s::beforeWrites);
      if (cell.phase() == Phase.IN_FLIGHT) {
        registration.start();
        Future<?> first = writerThread.submit(() -> s.write(Step.FIRST, 0));
        db.awaitLockWaitOrDone(s.backendPid(), first);
        atRegistration = registration.commit(table, rows.base(), rows.last());
        await(s, first);
      } else {
        onWriter(s, () -> s.write(Step.FIRST, 0));
      }
      onWriter(s, () -> s.write(Step.SECOND, 0));
      onWriter(s, s::end);
      onWriter(s, () -> s.close());
      return Objects.requireNonNull(atRegistration);
    } finally {
      registration.abandon();
      onWriter(s, () -> s.close());
    }
  }

  private static void runCurrent(Session s) throws Exception {
    try {
      onWriter(s, () -> s.open());
      onWriter(s, s::prime);
      onWriter(s, s::beforeWrites);
      onWriter(s, () -> s.write(Step.FIRST, 0));
      onWriter(s, () -> s.write(Step.SECOND, 0));
      onWriter(s, s::end);
    } finally {
      onWriter(s, () -> s.close());
    }
  }

  @FunctionalInterface
  private interface WriterStep {
    void run() throws Exception;
  }

  /** Runs one step on the writer's thread and waits for it, failing after the step timeout. */
  private static void onWriter(Session s, WriterStep step) throws Exception {
    Callable<Void> call =
        () -> {
          step.run();
          return null;
        };
    await(s, writerThread.submit(call));
  }

  private static void await(Session s, Future<?> step) throws Exception {
    try {
      step.get(InterleavingDb.STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      db.cancel(s.backendPid());
      try {
        step.get(InterleavingDb.STEP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException ignored) {
        // reported below
      }
      throw new AssertionError(
          "a step of the writer did not finish within "
              + InterleavingDb.STEP_TIMEOUT
              + " (cancelled); outcomes so far: "
              + s.outcomes());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw new AssertionError(e.getCause());
    }
  }

  // ------------------------------------------------------------------ rows and checks

  private static synchronized Rows nextRows() {
    return new Rows(++runs * Rows.SPAN);
  }

  /**
   * Seeds the rows: the stale holder's prime rows as never written by a holder; the contested rows
   * and the successor's prime rows per layout.
   */
  private static void seed(Cell cell, String table, Rows rows, Holders holders) {
    if (!cell.kind().needsExistingRows()) {
      return;
    }
    Set<Long> neutral = new TreeSet<>();
    Set<Long> contested = new TreeSet<>();
    for (int k = 0; k < 2; k++) {
      neutral.add(rows.stalePrime(k));
      contested.add(rows.currentPrime(k));
    }
    contested.add(rows.contested(Step.FIRST));
    contested.add(rows.contested(Step.SECOND));
    neutral.addAll(neutral.stream().map(id -> id + Rows.TWIN).toList());
    contested.addAll(contested.stream().map(id -> id + Rows.TWIN).toList());
    if (cell.layout() == Layout.ONE_RESOURCE) {
      neutral.addAll(contested);
      db.seed(table, neutral, 0, null);
    } else {
      String other = holders.resource() + "-y";
      db.registerCommitted(other, InterleavingDb.OTHER_RESOURCE_TOKEN, "holder-of-y");
      db.seed(table, neutral, 0, null);
      db.seed(table, contested, InterleavingDb.OTHER_RESOURCE_TOKEN, other);
    }
  }

  private static List<String> changes(Map<Long, RowState> before, Map<Long, RowState> after) {
    List<String> changes = new ArrayList<>();
    Set<Long> ids = new TreeSet<>(before.keySet());
    ids.addAll(after.keySet());
    for (long id : ids) {
      RowState was = before.get(id);
      RowState now = after.get(id);
      if (!Objects.equals(was, now)) {
        changes.add(
            "row "
                + id
                + " "
                + (was == null ? "(absent)" : was)
                + " -> "
                + (now == null ? "(deleted)" : now));
      }
    }
    return changes;
  }

  /**
   * A write sent straight to the driver connection carries no lease (the wrapper never sees it):
   * the strict trigger must refuse it as a write without a token, whoever sends it. That refusal is
   * the expected outcome, not a current holder wrongly refused.
   */
  private static boolean refusedAsLeaseless(Cell cell, Outcome o) {
    return cell.shape().writesThroughDriver()
        && !o.what().startsWith("prime")
        && o.error() instanceof SQLException e
        && FenceSchema.SQLSTATE_NO_TOKEN.equals(e.getSQLState());
  }

  private static Optional<String> refusedOrDropped(String who, Outcome o) {
    if (o.error() != null) {
      return Optional.of(who + o.what() + " was refused: " + Session.describe(o.error()));
    }
    if (o.isWrite() && o.droppedARow()) {
      return Optional.of(
          who
              + o.what()
              + " was silently dropped: returned "
              + Arrays.toString(o.counts())
              + " rows although the row exists");
    }
    return Optional.empty();
  }

  /** The current holder's contested rows hold what it wrote, stamped with its token. */
  private static List<String> currentHoldersRows(
      Cell cell, Session current, String table, Rows rows, Holders holders) {
    List<String> wrong = new ArrayList<>();
    Map<Long, RowState> now = db.rows(table, rows.base(), rows.last());
    long token = holders.successor().token().value();
    for (Step step : new Step[] {Step.FIRST, Step.SECOND}) {
      long id = rows.contested(step);
      boolean reportedOk =
          current.outcomes().stream()
              .anyMatch(
                  o ->
                      o.what().startsWith(step.name().toLowerCase(Locale.ROOT))
                          && o.error() == null
                          && !o.droppedARow());
      if (!reportedOk) {
        continue; // already reported as refused or dropped
      }
      for (long target : cell.kind().targets(step, id)) {
        RowState row = now.get(target);
        if (!cell.kind().leavesRow()) {
          if (row != null) {
            wrong.add("the current holder deleted row " + target + " but it is still " + row);
          }
        } else if (row == null
            || !row.v().equals(current.marker(step))
            || row.fenceToken() != token) {
          wrong.add(
              "the current holder's "
                  + step.name().toLowerCase(Locale.ROOT)
                  + " write reported success but row "
                  + target
                  + " is "
                  + (row == null ? "absent" : row)
                  + ", expected '"
                  + current.marker(step)
                  + "' token "
                  + token);
        }
      }
    }
    return wrong;
  }
}
