package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.testing.ProbeReport;
import dev.fencing.testing.StaleWriterProbe;
import java.sql.Connection;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The billing DAOs under the stale-writer probe: billing one customer as a paused holder whose
 * successor registered must be refused and change no invoice or charge. Fenced with guarded
 * statements (JDBC and jOOQ, both databases) and with the enforcement trigger (PostgreSQL); the
 * same DAOs on the plain pool are the fencing-off case the probe must catch.
 */
class BillingDaoProbeTest {

  private static final java.util.concurrent.atomic.AtomicInteger PERIODS =
      new java.util.concurrent.atomic.AtomicInteger();

  private static TestServers.Db postgres;
  private static TestServers.Db mariaDb;

  @BeforeAll
  static void setUp() throws Exception {
    postgres = new TestServers.Db("billing_probe");
    postgres.schema.seedCustomers(1);
    mariaDb = new TestServers.Db(TestServers.MARIADB, "billing_probe");
    mariaDb.schema.seedCustomers(1);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (postgres != null) {
      postgres.close();
    }
    if (mariaDb != null) {
      mariaDb.close();
    }
  }

  /** How the DAO's writes are fenced. */
  enum Mode {
    /** {@code BillingDao.guarded}: GuardedStatements (JDBC) or FencedDsl (jOOQ). */
    GUARDED,
    /** The unchanged DAO, fenced by the enforcement trigger (PostgreSQL only). */
    TRIGGER
  }

  static Stream<Arguments> fencedDaos() {
    return Stream.of(
        Arguments.of("PostgreSQL", "jdbc", Mode.GUARDED),
        Arguments.of("PostgreSQL", "jooq", Mode.GUARDED),
        Arguments.of("PostgreSQL", "jdbc", Mode.TRIGGER),
        Arguments.of("PostgreSQL", "jooq", Mode.TRIGGER),
        Arguments.of("MariaDB", "jdbc", Mode.GUARDED),
        Arguments.of("MariaDB", "jooq", Mode.GUARDED));
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("fencedDaos")
  void billingACustomerIsFenced(String database, String kind, Mode mode) {
    TestServers.Db db = db(database);
    FenceOptions options =
        FenceOptions.defaults()
            .withSchema(db.schema.fenceSchema())
            .withTriggerMode(mode == Mode.TRIGGER);
    FencedDataSource fenced = FencedDataSource.wrap(db.pool, options);
    BillingDao dao = mode == Mode.GUARDED ? dao(db, kind).guarded(options) : dao(db, kind);

    ProbeReport report = probe(fenced, db).run(as -> billOnce(fenced, dao, db, as));

    assertThat(report.fenced()).as(report.describe()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"PostgreSQL", "MariaDB"})
  void guardedStatementsOnAPlainPoolConnectionFailForTheHolderAlready(String database) {
    TestServers.Db db = db(database);
    FencedDataSource fenced =
        FencedDataSource.wrap(db.pool, FenceOptions.defaults().withSchema(db.schema.fenceSchema()));
    BillingDao dao = dao(db, "jdbc").guarded(fenced.options());

    // GuardedStatements needs a connection of the FencedDataSource, and says so
    ProbeReport report = probe(fenced, db).run(as -> billOnce(db.pool, dao, db, as));

    assertThat(report.fenced()).isFalse();
    assertThat(report.describe()).contains("first run, as the lease holder, failed");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"PostgreSQL", "MariaDB"})
  void fencedDslCarriesItsGuardInTheSqlSoEvenAPlainPoolConnectionIsFenced(String database) {
    TestServers.Db db = db(database);
    FencedDataSource fenced =
        FencedDataSource.wrap(db.pool, FenceOptions.defaults().withSchema(db.schema.fenceSchema()));
    BillingDao dao = dao(db, "jooq").guarded(fenced.options());

    ProbeReport report = probe(fenced, db).run(as -> billOnce(db.pool, dao, db, as));

    assertThat(report.fenced()).as(report.describe()).isTrue();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("plainDaos")
  void theUnguardedDaoOnThePlainPoolIsCaughtWritingBothTables(String database, String kind) {
    TestServers.Db db = db(database);
    FencedDataSource fenced =
        FencedDataSource.wrap(db.pool, FenceOptions.defaults().withSchema(db.schema.fenceSchema()));

    ProbeReport report = probe(fenced, db).run(as -> billOnce(db.pool, dao(db, kind), db, as));

    assertThat(report.fenced()).isFalse();
    assertThat(report.changedTables())
        .containsExactly(db.name() + ".charges", db.name() + ".invoices");
    assertThat(report.describe())
        .contains("completed without being refused")
        .contains("inserted")
        .contains(
            database.equals("PostgreSQL")
                ? "the enforcement trigger in lenient mode"
                : "either the write did not go through the FencedDataSource");
  }

  static Stream<Arguments> plainDaos() {
    return Stream.of(
        Arguments.of("PostgreSQL", "jdbc"),
        Arguments.of("PostgreSQL", "jooq"),
        Arguments.of("MariaDB", "jdbc"),
        Arguments.of("MariaDB", "jooq"));
  }

  private static StaleWriterProbe probe(FencedDataSource fenced, TestServers.Db db) {
    return StaleWriterProbe.on(fenced).withSchemas(db.name());
  }

  /** Bills the one customer for a period of this run's own, so every run has work to do. */
  private static void billOnce(
      DataSource from, BillingDao dao, TestServers.Db db, StaleWriterProbe.Holder as)
      throws Exception {
    try (Connection c = from.getConnection()) {
      Customer customer = dao.loadActiveNotInvoiced(c, "probe", 0, 1).get(0);
      String period = String.format("p%06d", PERIODS.incrementAndGet()); // VARCHAR(20)
      dao.billCustomer(c, customer, period, "probe-" + as, InvoiceCalculator.planPrice());
    }
  }

  private static TestServers.Db db(String database) {
    return database.equals("MariaDB") ? mariaDb : postgres;
  }

  private static BillingDao dao(TestServers.Db db, String kind) {
    BillingDatabase database = db.schema.database();
    return kind.equals("jooq")
        ? new JooqBillingDao(database, db.name())
        : new JdbcBillingDao(database, db.name());
  }
}
