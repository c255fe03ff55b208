package dev.fencing.examples;

import static org.jooq.impl.DSL.count;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.max;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.notExists;
import static org.jooq.impl.DSL.selectOne;
import static org.jooq.impl.DSL.table;

import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * {@link BillingDao} in jOOQ, without code generation: tables and fields are named with {@code
 * DSL.table(name(...))} and {@code DSL.field(name(...), type)}; jOOQ renders them in the {@link
 * BillingDatabase}'s dialect. {@link #guarded} writes the same rows through {@link FencedDsl}.
 */
public final class JooqBillingDao implements BillingDao {

  private static final Field<Long> C_ID = field(name("c", "id"), Long.class);
  private static final Field<String> C_NAME = field(name("c", "name"), String.class);
  private static final Field<String> C_PLAN = field(name("c", "plan"), String.class);
  private static final Field<Long> C_AMOUNT = field(name("c", "amount_cents"), Long.class);
  private static final Field<Boolean> C_ACTIVE = field(name("c", "active"), Boolean.class);
  private static final Field<Long> I_CUSTOMER = field(name("i", "customer_id"), Long.class);
  private static final Field<String> I_PERIOD = field(name("i", "period"), String.class);

  private static final Field<Long> ID = field(name("id"), Long.class);
  private static final Field<Long> CUSTOMER_ID = field(name("customer_id"), Long.class);
  private static final Field<Long> INVOICE_ID = field(name("invoice_id"), Long.class);
  private static final Field<String> PERIOD = field(name("period"), String.class);
  private static final Field<Long> AMOUNT = field(name("amount_cents"), Long.class);
  private static final Field<String> RUN_ID = field(name("run_id"), String.class);
  private static final Field<String> IDEMPOTENCY_KEY = field(name("idempotency_key"), String.class);

  private final BillingDatabase database;
  private final String schema;
  private final FencedDsl fenced;
  private final Table<?> customersC;
  private final Table<?> invoicesI;
  private final Table<?> invoices;
  private final Table<?> charges;

  /**
   * @param database the database the schema is on
   * @param schema the schema holding the billing tables
   */
  public JooqBillingDao(BillingDatabase database, String schema) {
    this(database, schema, null);
  }

  private JooqBillingDao(BillingDatabase database, String schema, FencedDsl fenced) {
    this.database = database;
    this.schema = schema;
    this.fenced = fenced;
    customersC = table(name(schema, "customers")).as("c");
    invoicesI = table(name(schema, "invoices")).as("i");
    invoices = table(name(schema, "invoices"));
    charges = table(name(schema, "charges"));
  }

  @Override
  public BillingDao guarded(FenceOptions fence) {
    return new JooqBillingDao(database, schema, new FencedDsl(fence));
  }

  private DSLContext ctx(Connection c) {
    return DSL.using(c, database.jooqDialect());
  }

  private Condition activeNotInvoiced(String period) {
    return C_ACTIVE
        .isTrue()
        .and(
            notExists(
                selectOne().from(invoicesI).where(I_CUSTOMER.eq(C_ID)).and(I_PERIOD.eq(period))));
  }

  @Override
  public long countActiveNotInvoiced(Connection c, String period) throws SQLException {
    try {
      Integer n =
          ctx(c)
              .select(count())
              .from(customersC)
              .where(activeNotInvoiced(period))
              .fetchOne(0, Integer.class);
      return n == null ? 0 : n;
    } catch (DataAccessException e) {
      throw unwrap(e);
    }
  }

  @Override
  public List<Customer> loadActiveNotInvoiced(Connection c, String period, long afterId, int limit)
      throws SQLException {
    try {
      return ctx(c)
          .select(C_ID, C_NAME, C_PLAN, C_AMOUNT)
          .from(customersC)
          .where(activeNotInvoiced(period))
          .and(C_ID.gt(afterId))
          .orderBy(C_ID)
          .limit(limit)
          .fetch(r -> new Customer(r.value1(), r.value2(), r.value3(), r.value4()));
    } catch (DataAccessException e) {
      throw unwrap(e);
    }
  }

  @Override
  public Outcome billCustomer(
      Connection c, Customer customer, String period, String runId, InvoiceCalculator calculator)
      throws SQLException {
    try {
      return ctx(c)
          .transactionResult(
              trx -> {
                DSLContext tx = trx.dsl();
                boolean invoiced =
                    tx.fetchExists(
                        tx.selectOne()
                            .from(invoices)
                            .where(CUSTOMER_ID.eq(customer.id()))
                            .and(PERIOD.eq(period)));
                if (invoiced) {
                  return Outcome.ALREADY_INVOICED;
                }
                long amount = calculator.amountCents(customer, period);
                if (fenced != null) {
                  insertGuarded(tx, customer, period, amount, runId);
                  return Outcome.CHARGED;
                }
                Long invoiceId =
                    tx.insertInto(invoices)
                        .columns(CUSTOMER_ID, PERIOD, AMOUNT, RUN_ID)
                        .values(customer.id(), period, amount, runId)
                        .returningResult(ID)
                        .fetchOne(ID);
                tx.insertInto(charges)
                    .columns(INVOICE_ID, CUSTOMER_ID, PERIOD, AMOUNT, RUN_ID, IDEMPOTENCY_KEY)
                    .values(
                        invoiceId,
                        customer.id(),
                        period,
                        amount,
                        runId,
                        IdempotencyKeys.of(runId, customer, period))
                    .execute();
                return Outcome.CHARGED;
              });
    } catch (DataAccessException e) {
      SQLException failure = unwrap(e);
      if (IdempotencyKeys.isDuplicateCharge(failure)) {
        return Outcome.ALREADY_CHARGED; // the transaction was rolled back
      }
      throw failure;
    }
  }

  /**
   * The two inserts through {@link FencedDsl}. A guarded insert reports a count, not the generated
   * id: the invoice's id is read back in the same transaction.
   */
  private void insertGuarded(
      DSLContext tx, Customer customer, String period, long amount, String runId) {
    Map<Field<?>, Object> invoice = new LinkedHashMap<>();
    invoice.put(CUSTOMER_ID, customer.id());
    invoice.put(PERIOD, period);
    invoice.put(AMOUNT, amount);
    invoice.put(RUN_ID, runId);
    fenced.insert(tx, invoices, invoice);
    Long invoiceId =
        tx.select(max(ID))
            .from(invoices)
            .where(CUSTOMER_ID.eq(customer.id()))
            .and(PERIOD.eq(period))
            .and(RUN_ID.eq(runId))
            .fetchOne(0, Long.class);
    Map<Field<?>, Object> charge = new LinkedHashMap<>(invoice);
    charge.put(INVOICE_ID, invoiceId);
    charge.put(IDEMPOTENCY_KEY, IdempotencyKeys.of(runId, customer, period));
    fenced.insert(tx, charges, charge);
  }

  /**
   * Gives callers the driver's (or a fencing wrapper's) own {@link SQLException}, so that a typed
   * rejection is still recognisable through jOOQ.
   */
  private static SQLException unwrap(DataAccessException e) {
    SQLException sql = e.getCause(SQLException.class);
    return sql != null ? sql : new SQLException(e.getMessage(), e.sqlState(), e);
  }
}
