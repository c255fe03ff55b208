package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LossReason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way JDBC can execute or write, by a stale holder and by the current one, on PostgreSQL and
 * MariaDB, through the {@link FencedDataSource} in default mode. A path is fenced (the stale
 * holder's write never commits and ends in {@link StaleTokenException} or {@link
 * LeaseLostSQLException} with its lease marked lost; the current holder's lands with the plain
 * statement's result) or refused for both holders before anything is written. Each cell also runs
 * as the fencing-off control: the stale holder's same write through the pool's own connection
 * lands, which proves the cell can fail.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EntryPointMatrixTest {

  /** What a path does in a scope. */
  enum Expect {
    FENCED,
    REFUSED
  }

  /** The database. */
  enum Backend {
    POSTGRES,
    MARIADB
  }

  /** Who writes. */
  enum Writer {
    STALE,
    CURRENT,
    CONTROL
  }

  /** The write of one cell: an UPDATE of one row of a fenced table. */
  record Write(FencingFixture fx, long id, String owner) {
    String sql() {
      return "UPDATE " + fx.table("accounts") + " SET owner = '" + owner + "' WHERE id = " + id;
    }

    String returning() {
      return sql() + " RETURNING id";
    }
  }

  @FunctionalInterface
  interface Path {
    /** Runs the write and returns the plain result as text (counts, or the rows returned). */
    String run(Connection c, Write w) throws SQLException;
  }

  /** The ways to execute or write. */
  enum EntryPoint {
    STATEMENT_EXECUTE_UPDATE((c, w) -> "" + c.createStatement().executeUpdate(w.sql())),
    STATEMENT_EXECUTE_UPDATE_KEYS(
        (c, w) -> {
          Statement s = c.createStatement();
          return s.executeUpdate(w.sql(), Statement.RETURN_GENERATED_KEYS)
              + rows(s.getGeneratedKeys());
        }),
    STATEMENT_EXECUTE_UPDATE_COLUMNS(
        (c, w) -> "" + c.createStatement().executeUpdate(w.sql(), new String[] {"id"})),
    STATEMENT_EXECUTE(
        (c, w) -> {
          Statement s = c.createStatement();
          return s.execute(w.sql()) + " " + s.getUpdateCount();
        }),
    STATEMENT_EXECUTE_LARGE_UPDATE((c, w) -> "" + c.createStatement().executeLargeUpdate(w.sql())),
    STATEMENT_BATCH(
        (c, w) -> {
          Statement s = c.createStatement();
          s.addBatch(w.sql());
          return Arrays.toString(s.executeBatch());
        }),
    STATEMENT_LARGE_BATCH(
        (c, w) -> {
          Statement s = c.createStatement();
          s.addBatch(w.sql());
          return Arrays.toString(s.executeLargeBatch());
        }),
    STATEMENT_RETURNING_EXECUTE_QUERY(
        (c, w) -> rows(c.createStatement().executeQuery(w.returning()))),
    STATEMENT_RETURNING_EXECUTE(
        (c, w) -> {
          Statement s = c.createStatement();
          return s.execute(w.returning()) + rows(s.getResultSet());
        }),
    PREPARED_EXECUTE_UPDATE((c, w) -> "" + c.prepareStatement(w.sql()).executeUpdate()),
    PREPARED_EXECUTE(
        (c, w) -> {
          PreparedStatement s = c.prepareStatement(w.sql());
          return s.execute() + " " + s.getUpdateCount();
        }),
    PREPARED_EXECUTE_LARGE_UPDATE((c, w) -> "" + c.prepareStatement(w.sql()).executeLargeUpdate()),
    PREPARED_BATCH(
        (c, w) -> {
          PreparedStatement s = c.prepareStatement(w.sql());
          s.addBatch();
          return Arrays.toString(s.executeBatch());
        }),
    PREPARED_LARGE_BATCH_IN_TRANSACTION(
        (c, w) -> {
          c.setAutoCommit(false);
          PreparedStatement s = c.prepareStatement(w.sql());
          s.addBatch();
          String result = Arrays.toString(s.executeLargeBatch());
          c.commit();
          return result;
        }),
    PREPARED_RETURNING_EXECUTE_QUERY(
        (c, w) -> rows(c.prepareStatement(w.returning()).executeQuery())),
    PREPARED_RETURNING_EXECUTE(
        (c, w) -> {
          PreparedStatement s = c.prepareStatement(w.returning());
          return s.execute() + rows(s.getResultSet());
        }),
    PREPARED_GENERATED_KEYS(
        (c, w) -> {
          PreparedStatement s = c.prepareStatement(w.sql(), Statement.RETURN_GENERATED_KEYS);
          return s.executeUpdate() + rows(s.getGeneratedKeys());
        }),
    PREPARED_COLUMN_NAMES(
        (c, w) -> "" + c.prepareStatement(w.sql(), new String[] {"id"}).executeUpdate()),
    PREPARED_TYPE_CONCURRENCY_HOLDABILITY(
        (c, w) ->
            ""
                + c.prepareStatement(
                        w.sql(),
                        ResultSet.TYPE_FORWARD_ONLY,
                        ResultSet.CONCUR_READ_ONLY,
                        ResultSet.CLOSE_CURSORS_AT_COMMIT)
                    .executeUpdate()),
    PREPARE_CALL((c, w) -> "" + c.prepareCall(w.sql()).executeUpdate()),
    PREPARE_CALL_EXECUTE(
        (c, w) -> {
          PreparedStatement s = c.prepareCall(w.sql());
          return s.execute() + " " + s.getUpdateCount();
        }),
    THROUGH_METADATA_CONNECTION(
        (c, w) -> "" + c.getMetaData().getConnection().createStatement().executeUpdate(w.sql())),
    THROUGH_STATEMENT_CONNECTION(
        (c, w) ->
            "" + c.createStatement().getConnection().prepareStatement(w.sql()).executeUpdate()),
    THROUGH_RESULT_SET_STATEMENT(
        (c, w) -> {
          ResultSet rs = c.createStatement().executeQuery("SELECT 1");
          return "" + rs.getStatement().executeUpdate(w.sql());
        }),
    THROUGH_METADATA_RESULT_SET(
        (c, w) -> {
          ResultSet tables = c.getMetaData().getTables(null, null, "accounts", null);
          Statement owner = tables.getStatement();
          Connection connection = owner == null ? c : owner.getConnection();
          return "" + connection.createStatement().executeUpdate(w.sql());
        }),
    UPDATABLE_RESULT_SET(
        (c, w) -> {
          ResultSet rs =
              c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_UPDATABLE)
                  .executeQuery(
                      "SELECT id, owner FROM "
                          + w.fx().table("accounts")
                          + " WHERE id = "
                          + w.id());
          rs.next();
          rs.updateString("owner", w.owner());
          rs.updateRow();
          return "updated";
        }),
    GUARDED_UPDATE(
        (c, w) -> {
          if (!c.isWrapperFor(dev.fencing.jdbc.internal.FencedConnection.class)) {
            return "" + c.createStatement().executeUpdate(w.sql());
          }
          PreparedStatement s =
              GuardedStatements.update(c, w.fx().table("accounts"), "owner = ?", "id = ?");
          s.setString(1, w.owner());
          s.setLong(2, w.id());
          return "" + s.executeUpdate();
        });

    final Path path;

    EntryPoint(Path path) {
      this.path = path;
    }

    Expect expect(Backend backend) {
      if (this == UPDATABLE_RESULT_SET) {
        return Expect.REFUSED;
      }
      // plain SQL on a fenced MariaDB table is refused before it is sent (docs/mariadb.md)
      return backend == Backend.MARIADB && this != GUARDED_UPDATE ? Expect.REFUSED : Expect.FENCED;
    }

    /**
     * The path's SQL runs on this backend at all: MariaDB has no {@code UPDATE ... RETURNING}, and
     * its driver takes only call syntax in {@code prepareCall}.
     */
    boolean runsOn(Backend backend) {
      return backend == Backend.POSTGRES
          || !(name().contains("RETURNING") || name().startsWith("PREPARE_CALL"));
    }
  }

  private static String rows(ResultSet rs) throws SQLException {
    List<Long> ids = new ArrayList<>();
    while (rs.next()) {
      ids.add(rs.getLong(1));
    }
    return " rows=" + ids.size();
  }

  private FencingFixture postgres;
  private FencingFixture mariaDb;
  private long nextId;

  @BeforeAll
  void setUp() {
    postgres = new FencingFixture();
    mariaDb = FencingFixture.onMariaDb();
  }

  @AfterAll
  void tearDown() {
    postgres.close();
    mariaDb.close();
  }

  Stream<Arguments> cells() {
    List<Arguments> cells = new ArrayList<>();
    for (Backend backend : Backend.values()) {
      for (EntryPoint entry : EntryPoint.values()) {
        for (Writer writer : Writer.values()) {
          if (entry.runsOn(backend)) {
            cells.add(Arguments.of(backend, entry, writer));
          }
        }
      }
    }
    return cells.stream();
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("cells")
  void theStaleHolderNeverCommitsAndTheCurrentOneLands(
      Backend backend, EntryPoint entry, Writer writer) throws Exception {
    FencingFixture fx = backend == Backend.POSTGRES ? postgres : mariaDb;
    long id = ++nextId;
    fx.insertAccount(id, "nobody", 0);
    String resource = "entry-" + id;
    FencedLeaseManager leases = fx.fencedLeases();
    Lease first = leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    fx.expireInRedis(resource);
    Lease current = leases.acquire(resource, FencingFixture.lease(Duration.ofSeconds(30)));
    Write write = new Write(fx, id, writer.name().toLowerCase());
    try {
      switch (writer) {
        case CONTROL -> {
          String result = run(fx.pool, entry, write);
          assertThat(result).as("without fencing the stale write lands").doesNotStartWith("!");
          assertThat(fx.ownerOf(id)).isEqualTo(write.owner());
        }
        case STALE -> {
          String result =
              Fencing.call(FencingFixture.unawareOfLoss(first), () -> run(fx.db, entry, write));
          assertThat(fx.ownerOf(id)).as("the stale write never commits").isEqualTo("nobody");
          if (entry.expect(backend) == Expect.FENCED) {
            assertThat(result)
                .as("refused by the fence")
                .matches("!(StaleTokenException|LeaseLostSQLException).*");
            assertThat(first.lossReason())
                .as("the lease marked lost")
                .contains(LossReason.SUPERSEDED);
          } else {
            assertThat(result).as("refused before it is sent").startsWith("!");
          }
        }
        case CURRENT -> {
          String result = Fencing.call(current, () -> run(fx.db, entry, write));
          if (entry.expect(backend) == Expect.FENCED) {
            assertThat(fx.ownerOf(id)).as("the current holder's write lands").isEqualTo("current");
            assertThat(
                    fx.queryLong(
                        "SELECT fence_token FROM " + fx.table("accounts") + " WHERE id = " + id))
                .isEqualTo(current.token().value());
            assertThat(result)
                .as("the plain statement's result")
                .isEqualTo(run(fx.pool, entry, new Write(fx, id, "control")));
            assertThat(current.isHeld()).isTrue();
          } else {
            assertThat(result).as("refused for every holder").startsWith("!");
            assertThat(fx.ownerOf(id)).isEqualTo("nobody");
          }
        }
        default -> throw new AssertionError(writer);
      }
    } finally {
      current.close();
    }
  }

  /** Runs the path on a connection of {@code through}; a refusal is returned as "!Type: ...". */
  private static String run(DataSource through, EntryPoint entry, Write write) {
    try (Connection c = through.getConnection()) {
      try {
        return entry.path.run(c, write);
      } finally {
        if (!c.getAutoCommit()) {
          c.rollback();
          c.setAutoCommit(true);
        }
      }
    } catch (SQLException e) {
      return "!" + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }
}
