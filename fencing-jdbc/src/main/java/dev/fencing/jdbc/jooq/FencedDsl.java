package dev.fencing.jdbc.jooq;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.Fencing;
import dev.fencing.jdbc.StaleTokenException;
import dev.fencing.jdbc.internal.FencedConnection;
import dev.fencing.jdbc.internal.GuardedSql;
import dev.fencing.jdbc.internal.Rejections;
import dev.fencing.schema.DatabaseProduct;
import dev.fencing.schema.FenceSchema;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.SQLDialect;
import org.jooq.SelectFieldOrAsterisk;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.exception.SQLDialectNotSupportedException;
import org.jooq.impl.CustomCondition;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Guarded writes for jOOQ: the same two guards as {@link dev.fencing.jdbc.GuardedStatements}, built
 * into jOOQ queries so you never write the predicate by hand:
 *
 * <pre>{@code
 * FencedDsl fenced = new FencedDsl(FenceOptions.defaults());
 * DSLContext ctx = DSL.using(fencedDataSource, SQLDialect.POSTGRES);
 * Fencing.run(lease, () ->
 *     fenced.update(ctx, INVOICES, Map.of(INVOICES.STATUS, "PAID"), INVOICES.ID.eq(id)));
 * }</pre>
 *
 * <p>The {@link DSLContext} must run on a {@link FencedDataSource} (or a connection from one) and
 * the call must be inside a {@link Fencing} scope. A stale write is reported, like every jOOQ
 * database error, as a {@link DataAccessException} whose cause is a {@link StaleTokenException}
 * (use {@code e.getCause(StaleTokenException.class)}). A write that affects no row is classified
 * with one read, on that path only.
 */
public final class FencedDsl {

  /** The name of the fence column the {@code migrations} module adds to fenced tables. */
  public static final String FENCE_COLUMN = FenceSchema.TOKEN_COLUMN;

  private final GuardedSql postgres;
  private final GuardedSql mariaDb;
  private final Table<?> fenceTable;
  private volatile LeaseParts last;
  private final Field<String> fenceResource;
  private final Field<Long> fenceToken;

  /**
   * Creates the helper.
   *
   * @param options where the fence lives
   * @throws NullPointerException if {@code options} is null
   */
  public FencedDsl(FenceOptions options) {
    Objects.requireNonNull(options, "options");
    this.postgres = GuardedSql.of(DatabaseProduct.POSTGRESQL, options.schema());
    this.mariaDb = GuardedSql.of(DatabaseProduct.MARIADB, options.schema());
    this.fenceTable = DSL.table(DSL.name(options.schema(), FenceSchema.FENCE_TABLE));
    this.fenceResource = DSL.field(DSL.name("resource"), SQLDataType.VARCHAR);
    this.fenceToken = DSL.field(DSL.name("token"), SQLDataType.BIGINT);
  }

  /**
   * The current scope's token, as a bind value.
   *
   * @return the token, as an inline {@code BIGINT}
   * @throws IllegalStateException outside a {@link Fencing} scope
   */
  public Field<Long> token() {
    return token(requireScope());
  }

  private Field<Long> token(Lease lease) {
    return parts(lease).token();
  }

  /**
   * The query parts of one lease, built once: a job runs many writes under the same lease. The
   * guarded SQL of both databases comes from {@link GuardedSql}; {@code fenceHeld} renders the one
   * of the query's dialect.
   */
  private record LeaseParts(
      Lease lease,
      Field<Long> token,
      Field<String> resource,
      GuardedSql.Bound mariaDb,
      Condition fenceHeld) {}

  private LeaseParts parts(Lease lease) {
    LeaseParts parts = last;
    if (parts == null || parts.lease() != lease) {
      GuardedSql.Bound postgresSql = postgres.bind(lease);
      GuardedSql.Bound mariaDbSql = mariaDb.bind(lease);
      parts =
          new LeaseParts(
              lease,
              DSL.inline(lease.token().value(), SQLDataType.BIGINT),
              DSL.inline(lease.resource(), SQLDataType.CLOB),
              mariaDbSql,
              fenceHeldInRenderedDialect(postgresSql.fenceHeld(), mariaDbSql.fenceHeld()));
      last = parts;
    }
    return parts;
  }

  /**
   * The database a query is rendered for, from its jOOQ dialect: the guarded SQL follows it.
   *
   * @return the product, or null for a dialect fencing does not write guarded SQL for
   */
  private static DatabaseProduct product(SQLDialect family) {
    if (family == SQLDialect.MARIADB) {
      return DatabaseProduct.MARIADB;
    }
    if (family == SQLDialect.POSTGRES || family == SQLDialect.DEFAULT) {
      return DatabaseProduct.POSTGRESQL;
    }
    return null;
  }

  /**
   * The fence column of {@code table}.
   *
   * @param table a fenced table
   * @return its {@code fence_token} column
   */
  public Field<Long> fenceColumn(Table<?> table) {
    return DSL.field(table.getQualifiedName().append(FENCE_COLUMN), SQLDataType.BIGINT);
  }

  /**
   * The column of {@code table} that names the resource whose holder wrote the row.
   *
   * @param table a fenced table
   * @return its {@code fence_resource} column
   */
  public Field<String> resourceColumn(Table<?> table) {
    return DSL.field(
        table.getQualifiedName().append(FenceSchema.RESOURCE_COLUMN), SQLDataType.CLOB);
  }

  /**
   * The row guard on {@code table}: the stored row was not written by a newer holder of the same
   * resource (tokens of different resources are never compared).
   */
  private Condition rowGuard(Table<?> table, Lease lease) {
    return fenceColumn(table)
        .le(token(lease))
        .or(resourceColumn(table).ne(parts(lease).resource()));
  }

  /**
   * Both guards on {@code table} as one condition, for queries you build yourself: the row guard
   * ({@code fence_token <= token}, compared only for rows last written under the same resource) and
   * the resource fence of the current scope. Also set {@code fence_token} to {@link #token()} and
   * {@code fence_resource} to the lease's resource in your update.
   *
   * <p>The resource fence is rendered in the dialect of the query the condition ends up in:
   * MariaDB's check in a query rendered for {@link SQLDialect#MARIADB}, PostgreSQL's for {@link
   * SQLDialect#POSTGRES} (and {@link SQLDialect#DEFAULT}); rendering it for any other dialect fails
   * with {@link SQLDialectNotSupportedException}. A query it refuses affects no row: unlike {@link
   * #update}, nothing classifies that as stale.
   *
   * @param table the fenced table the query writes
   * @return the row guard and the resource fence, as one condition
   * @throws IllegalStateException outside a {@link Fencing} scope
   */
  public Condition guard(Table<?> table) {
    Lease lease = requireScope();
    return rowGuard(table, lease).and(parts(lease).fenceHeld());
  }

  /**
   * The resource fence as a condition that renders in the dialect of the query it is rendered in:
   * MariaDB's check for {@link SQLDialect#MARIADB}, PostgreSQL's for {@link SQLDialect#POSTGRES}
   * and for {@link SQLDialect#DEFAULT}. Any other dialect fails to render ({@link
   * SQLDialectNotSupportedException}) rather than send a check written for another database. The
   * SQL is appended as it is: {@code DSL.condition(String)} would scan the ~450 characters for bind
   * markers and placeholders on every render; this SQL has neither (the registration is in it as
   * validated literals) and is one EXISTS predicate.
   */
  private static Condition fenceHeldInRenderedDialect(String postgres, String mariaDb) {
    return CustomCondition.of(
        ctx -> {
          DatabaseProduct product = product(ctx.family());
          if (product == null) {
            throw new SQLDialectNotSupportedException(
                "FencedDsl renders the fence check for PostgreSQL and MariaDB only; this"
                    + " query is rendered for "
                    + ctx.dialect());
          }
          ctx.sql(product == DatabaseProduct.MARIADB ? mariaDb : postgres);
        });
  }

  /**
   * Runs a guarded {@code UPDATE table SET values WHERE condition}.
   *
   * @param ctx a context on a {@link FencedDataSource}
   * @param table the table
   * @param values the new values
   * @param condition which rows
   * @return the number of rows updated; 0 only if no row matched
   * @throws DataAccessException caused by {@link StaleTokenException} if the write was stale, or by
   *     another database error
   * @throws IllegalStateException outside a {@link Fencing} scope
   */
  public int update(
      DSLContext ctx, Table<?> table, Map<? extends Field<?>, ?> values, Condition condition) {
    Lease lease = requireScope();
    Field<Long> fence = fenceColumn(table);
    int rows =
        ctx.update(table)
            .set(values)
            .set(fence, token(lease))
            .set(resourceColumn(table), parts(lease).resource())
            .where(condition)
            .and(rowGuard(table, lease))
            .and(parts(lease).fenceHeld())
            .execute();
    return classified(ctx, lease, rows);
  }

  /**
   * Runs a guarded {@code DELETE FROM table WHERE condition}.
   *
   * @param ctx a context on a {@link FencedDataSource}
   * @param table the table
   * @param condition which rows
   * @return the number of rows deleted; 0 only if no row matched
   * @throws DataAccessException caused by {@link StaleTokenException} if the write was stale
   * @throws IllegalStateException outside a {@link Fencing} scope
   */
  public int delete(DSLContext ctx, Table<?> table, Condition condition) {
    Lease lease = requireScope();
    int rows =
        ctx.deleteFrom(table)
            .where(condition)
            .and(rowGuard(table, lease))
            .and(parts(lease).fenceHeld())
            .execute();
    return classified(ctx, lease, rows);
  }

  /**
   * Runs a guarded INSERT of one row; {@code fence_token} is set to the writer's token.
   *
   * @param ctx a context on a {@link FencedDataSource}
   * @param table the table
   * @param values the row
   * @return 1
   * @throws DataAccessException caused by {@link StaleTokenException} if the write was stale
   * @throws IllegalStateException outside a {@link Fencing} scope
   */
  public int insert(DSLContext ctx, Table<?> table, Map<? extends Field<?>, ?> values) {
    Lease lease = requireScope();
    List<Field<?>> columns = new ArrayList<>(values.keySet());
    columns.add(fenceColumn(table));
    columns.add(resourceColumn(table));
    int rows =
        ctx.insertInto(table).columns(columns).select(selectRow(ctx, lease, values)).execute();
    return classified(ctx, lease, rows);
  }

  /**
   * Runs a guarded upsert: inserts the row, or on a conflict on {@code keys} updates the other
   * columns only if the stored row was not written by a newer holder.
   *
   * @param ctx a context on a {@link FencedDataSource}
   * @param table the table
   * @param values the row
   * @param keys the unique key columns, all in {@code values}
   * @return 1 when inserted or updated; 0 only if the stored row was written by a newer holder of
   *     the same registration (cannot happen while the fence holds)
   * @throws DataAccessException caused by {@link StaleTokenException} if the write was stale
   * @throws IllegalStateException outside a {@link Fencing} scope
   * @throws IllegalArgumentException if a key is not among the values
   */
  public int upsert(
      DSLContext ctx, Table<?> table, Map<? extends Field<?>, ?> values, List<Field<?>> keys) {
    Lease lease = requireScope();
    if (keys.isEmpty() || !values.keySet().containsAll(keys)) {
      throw new IllegalArgumentException("upsert keys " + keys + " must be among the values");
    }
    if (isMariaDb(ctx)) {
      return classified(ctx, lease, mariaDbUpsert(ctx, lease, table, values, keys));
    }
    Field<Long> fence = fenceColumn(table);
    Field<String> resource = resourceColumn(table);
    List<Field<?>> columns = new ArrayList<>(values.keySet());
    columns.add(fence);
    columns.add(resource);
    Map<Field<?>, Object> updates = new LinkedHashMap<>();
    updates.put(fence, DSL.excluded(fence));
    updates.put(resource, DSL.excluded(resource));
    for (Field<?> column : values.keySet()) {
      if (!keys.contains(column)) {
        Field<?> plain = DSL.field(DSL.name(column.getUnqualifiedName()), column.getDataType());
        updates.put(plain, DSL.excluded(plain));
      }
    }
    var update =
        ctx.insertInto(table)
            .columns(columns)
            .select(selectRow(ctx, lease, values))
            .onConflict(keys)
            .doUpdate()
            .set(updates);
    int rows =
        update
            .where(fence.le(DSL.excluded(fence)).or(resource.ne(DSL.excluded(resource))))
            .execute();
    return classified(ctx, lease, rows);
  }

  private org.jooq.Select<?> selectRow(
      DSLContext ctx, Lease lease, Map<? extends Field<?>, ?> values) {
    List<SelectFieldOrAsterisk> row = new ArrayList<>();
    values.forEach((field, value) -> row.add(value(field, value)));
    row.add(token(lease));
    row.add(parts(lease).resource());
    return DSL.select(row).where(parts(lease).fenceHeld());
  }

  /** Whether the context speaks MariaDB, whose upsert and fence read are MariaDB's own. */
  private static boolean isMariaDb(DSLContext ctx) {
    return product(ctx.family()) == DatabaseProduct.MARIADB;
  }

  /**
   * MariaDB's guarded upsert ({@code INSERT ... SELECT ... ON DUPLICATE KEY UPDATE}, the row guard
   * raising ZF001), the same SQL as {@link dev.fencing.jdbc.GuardedStatements#upsert}, with the
   * values bound in order.
   */
  private int mariaDbUpsert(
      DSLContext ctx,
      Lease lease,
      Table<?> table,
      Map<? extends Field<?>, ?> values,
      List<Field<?>> keys) {
    List<String> columns = new ArrayList<>();
    List<Object> binds = new ArrayList<>();
    values.forEach(
        (field, value) -> {
          columns.add(field.getUnqualifiedName().last());
          binds.add(value instanceof Field<?> f ? f : DSL.val(value, field));
        });
    List<String> keyNames = new ArrayList<>();
    keys.forEach(key -> keyNames.add(key.getUnqualifiedName().last()));
    String name = String.join(".", table.getQualifiedName().getName());
    String upsert = parts(lease).mariaDb().upsert(name, columns, keyNames).sql();
    return ctx.execute(upsert, binds.toArray());
  }

  @SuppressWarnings("unchecked")
  private static <T> Field<T> value(Field<T> field, Object value) {
    return value instanceof Field<?> f ? (Field<T>) f : DSL.val((T) value, field);
  }

  private static Lease requireScope() {
    return Fencing.currentLease()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "a guarded write must run inside Fencing.run(lease, ...); nothing was written"));
  }

  /**
   * A write that affected no row: classified by the fenced connection the context runs on (its
   * observer hears of the rejection), else with a read of the fence through the context.
   */
  private int classified(DSLContext ctx, Lease lease, int rows) {
    if (rows > 0) {
      return rows;
    }
    StaleTokenException stale = ctx.connectionResult(c -> rejection(ctx, c, lease));
    if (stale != null) {
      throw new DataAccessException(stale.getMessage(), stale);
    }
    return 0;
  }

  private StaleTokenException rejection(DSLContext ctx, Connection connection, Lease lease)
      throws SQLException {
    try {
      if (connection.isWrapperFor(FencedConnection.class)) {
        connection.unwrap(FencedConnection.class).classifyNoRows();
        return null;
      }
      var read =
          ctx.select(
                  fenceToken,
                  DSL.field(
                      (isMariaDb(ctx) ? mariaDb : postgres).leaseIdOnCurrentEpoch(),
                      SQLDataType.VARCHAR))
              .from(fenceTable)
              .where(fenceResource.eq(lease.resource()));
      // on MariaDB a locking read: a plain one returns a REPEATABLE READ transaction's snapshot
      Record2<Long, String> fence = isMariaDb(ctx) ? read.forShare().fetchOne() : read.fetchOne();
      Rejections.classify(
          lease,
          fence == null ? 0 : fence.value1(),
          fence == null ? null : fence.value2(),
          FenceObserver.NONE);
      return null;
    } catch (StaleTokenException stale) {
      return stale;
    }
  }
}
