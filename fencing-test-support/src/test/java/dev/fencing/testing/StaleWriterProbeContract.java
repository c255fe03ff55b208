package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.GuardedStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The probe on real DAOs: it passes fenced ones and fails, naming the table and the way to fence
 * it, for each unfenced path (a raw pool connection, a table without fence_token, unwrap). Each
 * failing case is the same DAO with its fencing switched off, so the passing cases can fail.
 */
abstract class StaleWriterProbeContract {

  private static ProbeDatabase database;

  abstract ProbeDatabase newDatabase();

  ProbeDatabase database() {
    if (database == null) {
      database = newDatabase();
    }
    return database;
  }

  @AfterAll
  static void dropDatabase() {
    if (database != null) {
      database.close();
      database = null;
    }
  }

  /** A fenced DAO: a guarded statement on a connection of the fenced data source. */
  void guardedAddToBalance(long amount) throws SQLException {
    ProbeDatabase d = database();
    try (Connection c = d.db.getConnection();
        PreparedStatement s =
            GuardedStatements.update(c, d.table("accounts"), "balance = balance + ?", "id = 1")) {
      s.setLong(1, amount);
      s.executeUpdate();
    }
  }

  /** A DAO writing plain SQL (PostgreSQL: guarded by the rewriter on a fenced connection). */
  void addToBalance(DataSource from, long amount) throws SQLException {
    ProbeDatabase d = database();
    try (Connection c = from.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "UPDATE " + d.table("accounts") + " SET balance = balance + ? WHERE id = 1")) {
      s.setLong(1, amount);
      s.executeUpdate();
    }
  }

  /** The source of connections a DAO uses. */
  interface DataSource {
    Connection getConnection() throws SQLException;
  }

  @Test
  void aGuardedWriteThroughTheFencedDataSourceIsFenced() {
    ProbeDatabase d = database();
    ProbeReport report = d.probe(d.db).run(as -> guardedAddToBalance(10));

    assertThat(report.fenced()).as(report.describe()).isTrue();
    assertThat(report.probedTables()).contains(d.table("accounts"), d.table("notes"));
    assertThat(report.staleRunSql()).anyMatch(sql -> sql.contains("accounts"));
  }

  @Test
  void guardedStatementsAreFenced() {
    ProbeDatabase d = database();
    d.probe(d.db)
        .check(
            as -> {
              try (Connection c = d.db.getConnection();
                  PreparedStatement s =
                      GuardedStatements.update(c, d.table("accounts"), "owner = ?", "id = ?")) {
                s.setString(1, "owner-" + as);
                s.setLong(2, 1);
                s.executeUpdate();
              }
            });
  }

  @Test
  void aRawPoolConnectionIsFoundAndReportedAsGoingAroundTheWrapper() {
    ProbeDatabase d = database();
    long start = balance();
    ProbeReport report = d.probe(d.db).run(as -> addToBalance(d.pool::getConnection, 10));

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(d.table("accounts"));
    assertThat(report.describe())
        .contains("completed without being refused")
        .contains("changed 1 row of " + d.table("accounts") + " (fenced: has fence_token)")
        .contains("balance " + (start + 10) + " -> " + (start + 20))
        .contains("sent no statement naming accounts: the write went around it")
        .contains("the write did not go through the FencedDataSource in the scope")
        .contains("Take the connection from the FencedDataSource inside the scope")
        .contains("still believed held");
    assertThatThrownBy(() -> d.probe(d.db).check(as -> addToBalance(d.pool::getConnection, 1)))
        .isInstanceOf(AssertionError.class)
        .hasMessageStartingWith("not fenced: the stale-writer probe");
  }

  @Test
  void aTableWithoutFenceTokenIsFoundAndReportedWithTheWaysToFenceIt() {
    ProbeDatabase d = database();
    ProbeReport report =
        d.probe(d.db)
            .run(
                as -> {
                  try (Connection c = d.db.getConnection();
                      PreparedStatement s =
                          c.prepareStatement(
                              "UPDATE " + d.table("notes") + " SET body = ? WHERE id = 1")) {
                    s.setString(1, "body-" + as);
                    s.executeUpdate();
                  }
                });

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(d.table("notes"));
    assertThat(report.describe())
        .contains("(NOT fenced: no fence_token)")
        .contains("body body-FIRST_HOLDER -> body-STALE_HOLDER")
        .contains("SQL the FencedDataSource sent:")
        .contains("UPDATE " + d.table("notes") + " SET body = ? WHERE id = 1")
        .contains("MigrationOptions.builder().fence(\"" + d.table("notes") + "\")")
        .contains("GuardedStatements or FencedDsl");
  }

  @Test
  void unwrappingToTheDriversConnectionIsFound() {
    ProbeDatabase d = database();
    ProbeReport report =
        d.probe(d.db)
            .run(
                as -> {
                  try (Connection fenced = d.db.getConnection()) {
                    Connection driver = fenced.unwrap(driverConnection());
                    addToBalance(() -> new NonClosing(driver).get(), 5);
                  }
                });

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables()).containsExactly(d.table("accounts"));
    assertThat(report.describe()).contains("went around it").contains("unwrap()");
  }

  @Test
  void aWriteOnAnotherThreadIsReportedAsOutsideTheScope() {
    ProbeDatabase d = database();
    java.util.concurrent.ExecutorService other =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      ProbeReport report =
          d.probe(d.db)
              .run(
                  as ->
                      other
                          .submit(
                              () -> {
                                addToBalance(d.db::getConnection, 3);
                                return null;
                              })
                          .get(30, java.util.concurrent.TimeUnit.SECONDS));

      assertThat(report.fenced()).isFalse();
      assertThat(report.changedTables()).containsExactly(d.table("accounts"));
      assertThat(report.describe())
          .contains(RecordingDataSource.OUTSIDE_SCOPE + "UPDATE " + d.table("accounts"))
          .contains("outside the fencing scope (on another thread");
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void aWriteToAnUnfencedTableBeforeARefusedOneIsStillFound() {
    ProbeDatabase d = database();
    ProbeReport report =
        d.probe(d.db)
            .run(
                as -> {
                  try (Connection c = d.db.getConnection();
                      PreparedStatement note =
                          c.prepareStatement(
                              "UPDATE " + d.table("notes") + " SET body = ? WHERE id = 1")) {
                    note.setString(1, "side-" + as);
                    note.executeUpdate(); // auto-commit: kept even though the next one is refused
                  }
                  guardedAddToBalance(1);
                });

    assertThat(report.fenced()).isFalse();
    assertThat(report.staleRunThrew()).isPresent();
    assertThat(report.changedTables()).containsExactly(d.table("notes"));
    assertThat(report.findings()).hasSize(1);
  }

  @Test
  void codeThatWritesNothingProvesNothing() {
    ProbeDatabase d = database();
    ProbeReport report = d.probe(d.db).run(as -> {});

    assertThat(report.fenced()).isFalse();
    assertThat(report.describe()).contains("changed no row");
  }

  @Test
  void aFailureOtherThanARefusalIsNotTakenForOne() {
    ProbeDatabase d = database();
    ProbeReport report =
        d.probe(d.db)
            .run(
                as -> {
                  if (as == StaleWriterProbe.Holder.STALE_HOLDER) {
                    throw new IllegalStateException("boom"); // before writing: nothing refused
                  }
                  guardedAddToBalance(1);
                });

    assertThat(report.fenced()).isFalse();
    assertThat(report.describe()).contains("not with a fencing refusal").contains("boom");
  }

  long balance() {
    return database().queryLong("SELECT balance FROM " + database().table("accounts"));
  }

  abstract Class<? extends Connection> driverConnection();

  /**
   * A connection whose close is left to its owner (the fenced connection it was unwrapped from).
   */
  record NonClosing(Connection connection) {
    Connection get() {
      return (Connection)
          java.lang.reflect.Proxy.newProxyInstance(
              NonClosing.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                  return null;
                }
                try {
                  return method.invoke(connection, args);
                } catch (java.lang.reflect.InvocationTargetException e) {
                  throw e.getCause();
                }
              });
    }
  }

  /** The fenced data sources a subclass may add cases for. */
  FencedDataSource db() {
    return database().db;
  }
}
