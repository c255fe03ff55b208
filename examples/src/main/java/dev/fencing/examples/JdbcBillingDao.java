package dev.fencing.examples;

import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.GuardedStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link BillingDao} in plain JDBC, in SQL that PostgreSQL and MariaDB both accept ({@code INSERT
 * ... RETURNING} is MariaDB 10.5+). {@link #guarded} writes the same rows through {@link
 * GuardedStatements}.
 */
public final class JdbcBillingDao implements BillingDao {

  private final BillingDatabase database;
  private final String schema;
  private final boolean guarded;
  private final boolean idempotencyKeys;
  private final String countSql;
  private final String loadSql;
  private final String existsSql;
  private final String insertInvoiceSql;
  private final String invoiceIdSql;
  private final String insertChargeSql;

  /**
   * @param database the database the schema is on
   * @param schema the schema holding the billing tables
   */
  public JdbcBillingDao(BillingDatabase database, String schema) {
    this(database, schema, false, true);
  }

  private JdbcBillingDao(
      BillingDatabase database, String schema, boolean guarded, boolean idempotencyKeys) {
    this.database = database;
    this.schema = schema;
    this.guarded = guarded;
    this.idempotencyKeys = idempotencyKeys;
    String s = database.quote(schema);
    String notInvoiced =
        " FROM "
            + s
            + ".customers c WHERE c.active AND NOT EXISTS (SELECT 1 FROM "
            + s
            + ".invoices i WHERE i.customer_id = c.id AND i.period = ?)";
    countSql = "SELECT count(*)" + notInvoiced;
    loadSql =
        "SELECT c.id, c.name, c.plan, c.amount_cents"
            + notInvoiced
            + " AND c.id > ? ORDER BY c.id LIMIT ?";
    existsSql = "SELECT 1 FROM " + s + ".invoices WHERE customer_id = ? AND period = ? LIMIT 1";
    insertInvoiceSql =
        "INSERT INTO "
            + s
            + ".invoices (customer_id, period, amount_cents, run_id) VALUES (?, ?, ?, ?)"
            + " RETURNING id";
    invoiceIdSql =
        "SELECT max(id) FROM "
            + s
            + ".invoices WHERE customer_id = ? AND period = ? AND run_id = ?";
    insertChargeSql =
        "INSERT INTO "
            + s
            + ".charges (invoice_id, customer_id, period, amount_cents, run_id, idempotency_key)"
            + " VALUES (?, ?, ?, ?, ?, ?)";
  }

  @Override
  public BillingDao guarded(FenceOptions fence) {
    return new JdbcBillingDao(database, schema, true, idempotencyKeys);
  }

  /**
   * The same DAO writing its charges without an idempotency key (NULL, not constrained): a retry of
   * a charge whose reply was lost charges again. For the control of the idempotency test.
   */
  public JdbcBillingDao withoutIdempotencyKeys() {
    return new JdbcBillingDao(database, schema, guarded, false);
  }

  @Override
  public long countActiveNotInvoiced(Connection c, String period) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(countSql)) {
      ps.setString(1, period);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Override
  public List<Customer> loadActiveNotInvoiced(Connection c, String period, long afterId, int limit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(loadSql)) {
      ps.setString(1, period);
      ps.setLong(2, afterId);
      ps.setInt(3, limit);
      try (ResultSet rs = ps.executeQuery()) {
        List<Customer> batch = new ArrayList<>(limit);
        while (rs.next()) {
          batch.add(new Customer(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4)));
        }
        return batch;
      }
    }
  }

  @Override
  public Outcome billCustomer(
      Connection c, Customer customer, String period, String runId, InvoiceCalculator calculator)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      Outcome outcome = billInTransaction(c, customer, period, runId, calculator);
      c.commit();
      return outcome;
    } catch (SQLException e) {
      rollback(c, e);
      if (IdempotencyKeys.isDuplicateCharge(e)) {
        return Outcome.ALREADY_CHARGED;
      }
      throw e;
    } catch (RuntimeException e) {
      rollback(c, e);
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }

  private static void rollback(Connection c, Exception failure) {
    try {
      c.rollback();
    } catch (SQLException rollbackFailure) {
      failure.addSuppressed(rollbackFailure);
    }
  }

  private Outcome billInTransaction(
      Connection c, Customer customer, String period, String runId, InvoiceCalculator calculator)
      throws SQLException {
    try (PreparedStatement exists = c.prepareStatement(existsSql)) {
      exists.setLong(1, customer.id());
      exists.setString(2, period);
      try (ResultSet rs = exists.executeQuery()) {
        if (rs.next()) {
          return Outcome.ALREADY_INVOICED;
        }
      }
    }
    long amount = calculator.amountCents(customer, period);
    long invoiceId =
        guarded
            ? insertGuardedInvoice(c, customer, period, amount, runId)
            : insertInvoice(c, customer, period, amount, runId);
    try (PreparedStatement charge =
        guarded
            ? GuardedStatements.insert(
                c,
                schema + ".charges",
                "invoice_id",
                "customer_id",
                "period",
                "amount_cents",
                "run_id",
                "idempotency_key")
            : c.prepareStatement(insertChargeSql)) {
      charge.setLong(1, invoiceId);
      charge.setLong(2, customer.id());
      charge.setString(3, period);
      charge.setLong(4, amount);
      charge.setString(5, runId);
      charge.setString(6, idempotencyKeys ? IdempotencyKeys.of(runId, customer, period) : null);
      charge.executeUpdate();
    }
    return Outcome.CHARGED;
  }

  private long insertInvoice(
      Connection c, Customer customer, String period, long amount, String runId)
      throws SQLException {
    try (PreparedStatement invoice = c.prepareStatement(insertInvoiceSql)) {
      bindInvoice(invoice, customer, period, amount, runId);
      try (ResultSet rs = invoice.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * The guarded insert reports a count, not the generated id: the id is read back in the same
   * transaction (this run's invoice for the customer and period).
   */
  private long insertGuardedInvoice(
      Connection c, Customer customer, String period, long amount, String runId)
      throws SQLException {
    try (PreparedStatement invoice =
        GuardedStatements.insert(
            c, schema + ".invoices", "customer_id", "period", "amount_cents", "run_id")) {
      bindInvoice(invoice, customer, period, amount, runId);
      invoice.executeUpdate();
    }
    try (PreparedStatement id = c.prepareStatement(invoiceIdSql)) {
      id.setLong(1, customer.id());
      id.setString(2, period);
      id.setString(3, runId);
      try (ResultSet rs = id.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static void bindInvoice(
      PreparedStatement invoice, Customer customer, String period, long amount, String runId)
      throws SQLException {
    invoice.setLong(1, customer.id());
    invoice.setString(2, period);
    invoice.setLong(3, amount);
    invoice.setString(4, runId);
  }
}
