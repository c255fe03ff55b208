package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The same guards through jOOQ, without hand-written predicates. */
class JooqFencingTest {

  private static FencingFixture fx;
  private static DSLContext ctx;
  private static FencedDsl fenced;
  private static Table<?> accounts;
  private static Table<?> charges;
  private static final Field<Long> ID = DSL.field(DSL.name("id"), SQLDataType.BIGINT);
  private static final Field<String> OWNER = DSL.field(DSL.name("owner"), SQLDataType.VARCHAR);
  private static final Field<Long> CUSTOMER =
      DSL.field(DSL.name("customer_id"), SQLDataType.BIGINT);
  private static final Field<Long> AMOUNT = DSL.field(DSL.name("amount"), SQLDataType.BIGINT);

  private Lease stale;
  private Lease current;

  @BeforeAll
  static void setUp() {
    fx = new FencingFixture();
    ctx = DSL.using(fx.db, SQLDialect.POSTGRES);
    fenced = new FencedDsl(FenceOptions.defaults().withSchema(fx.fenceSchema));
    accounts = DSL.table(DSL.name(fx.schema, "accounts"));
    charges = DSL.table(DSL.name(fx.schema, "charges"));
  }

  @AfterAll
  static void tearDown() {
    fx.close();
  }

  @BeforeEach
  void staleAndCurrentHolders() {
    FencingFixture.Holders holders = fx.staleAndCurrent("jooq");
    stale = holders.stale();
    current = holders.current();
  }

  @AfterEach
  void release() {
    current.close();
    fx.exec("TRUNCATE " + fx.table("charges") + ", " + fx.table("accounts"));
  }

  /** jOOQ on the pool itself: fencing switched off, as before this library. */
  private static DSLContext unfenced() {
    return DSL.using(fx.pool, SQLDialect.POSTGRES);
  }

  private int setOwner(Lease lease, long id, String owner) {
    return Fencing.call(lease, () -> fenced.update(ctx, accounts, Map.of(OWNER, owner), ID.eq(id)));
  }

  @Test
  void shouldRejectAStaleUpdateOfARowTheSuccessorWrote() {
    fx.insertAccount(1, "nobody", 0);
    assertThat(setOwner(current, 1, "B")).isEqualTo(1);

    assertRejectedAsStale(() -> setOwner(stale, 1, "A"));
    assertThat(fx.ownerOf(1)).isEqualTo("B");
    assertThat(fx.queryLong("SELECT fence_token FROM " + fx.table("accounts") + " WHERE id = 1"))
        .isEqualTo(current.token().value());
  }

  @Test
  void shouldRejectAStaleUpdateOfARowTheSuccessorNeverTouched() {
    fx.insertAccount(2, "nobody", 0);
    assertRejectedAsStale(() -> setOwner(stale, 2, "A"));
    assertThat(fx.ownerOf(2)).isEqualTo("nobody");
  }

  @Test
  void withAPlainJooqUpdateTheStaleWriteLands() {
    fx.insertAccount(3, "nobody", 0);
    setOwner(current, 3, "B");
    int rows =
        Fencing.call(
            stale, () -> unfenced().update(accounts).set(OWNER, "A").where(ID.eq(3L)).execute());
    assertThat(rows).isEqualTo(1);
    assertThat(fx.ownerOf(3)).as("the violation FencedDsl prevents").isEqualTo("A");
  }

  @Test
  void shouldInsertUpsertAndDeleteWithTheCurrentTokenOnly() {
    Map<Field<?>, Object> row = new LinkedHashMap<>();
    row.put(CUSTOMER, 1L);
    row.put(AMOUNT, 100L);
    assertThat(Fencing.call(current, () -> fenced.insert(ctx, charges, row))).isEqualTo(1);
    Map<Field<?>, Object> staleRow = new LinkedHashMap<>();
    staleRow.put(CUSTOMER, 2L);
    staleRow.put(AMOUNT, 100L);
    assertRejectedAsStale(() -> Fencing.call(stale, () -> fenced.insert(ctx, charges, staleRow)));
    assertRejectedAsStale(
        () -> Fencing.call(stale, () -> fenced.upsert(ctx, charges, staleRow, List.of(CUSTOMER))));
    assertThat(
            fx.queryLong("SELECT count(*) FROM " + fx.table("charges") + " WHERE customer_id = 2"))
        .as("a new key, so only the fence could have stopped the stale insert")
        .isZero();

    row.put(AMOUNT, 250L);
    assertThat(Fencing.call(current, () -> fenced.upsert(ctx, charges, row, List.of(CUSTOMER))))
        .isEqualTo(1);
    row.put(AMOUNT, 999L);
    assertRejectedAsStale(
        () -> Fencing.call(stale, () -> fenced.upsert(ctx, charges, row, List.of(CUSTOMER))));
    assertThat(fx.queryLong("SELECT amount FROM " + fx.table("charges"))).isEqualTo(250);

    assertRejectedAsStale(
        () -> Fencing.call(stale, () -> fenced.delete(ctx, charges, CUSTOMER.eq(1L))));
    assertThat(Fencing.call(current, () -> fenced.delete(ctx, charges, CUSTOMER.eq(1L))))
        .isEqualTo(1);
    assertThat(fx.queryLong("SELECT count(*) FROM " + fx.table("charges"))).isZero();
  }

  @Test
  void withAPlainJooqInsertTheStaleHoldersNewRowLands() {
    int rows =
        Fencing.call(
            stale,
            () ->
                unfenced()
                    .insertInto(charges)
                    .columns(CUSTOMER, AMOUNT)
                    .values(3L, 100L)
                    .execute());
    assertThat(rows).as("the violation FencedDsl prevents").isEqualTo(1);
  }

  /**
   * The bare condition in a query built by hand: the current holder writes, the stale holder writes
   * nothing; the same stale query without it is {@link #withAPlainJooqUpdateTheStaleWriteLands}.
   */
  @Test
  void theGuardConditionInAHandBuiltUpdateRefusesTheStaleHolder() {
    fx.insertAccount(5, "nobody", 0);
    assertThat(Fencing.call(current, () -> guardedSetOwner(5, "B"))).isEqualTo(1);

    assertThat(Fencing.call(stale, () -> guardedSetOwner(5, "A"))).isZero();
    assertThat(fx.ownerOf(5)).isEqualTo("B");
    assertThat(fx.queryLong("SELECT fence_token FROM " + fx.table("accounts") + " WHERE id = 5"))
        .isEqualTo(current.token().value());
  }

  @Test
  void theGuardConditionRefusesToRenderForADatabaseItDoesNotSpeak() {
    Fencing.run(
        current,
        () -> {
          org.jooq.Condition guard = fenced.guard(accounts);
          assertThat(DSL.using(SQLDialect.MARIADB).renderInlined(guard))
              .contains("LOCK IN SHARE MODE")
              .doesNotContain("set_config");
          assertThat(DSL.using(SQLDialect.POSTGRES).renderInlined(guard))
              .contains("FOR SHARE OF f");
          assertThatThrownBy(() -> DSL.using(SQLDialect.H2).renderInlined(guard))
              .isInstanceOf(org.jooq.exception.SQLDialectNotSupportedException.class)
              .hasMessageContaining("PostgreSQL and MariaDB only");
        });
  }

  private int guardedSetOwner(long id, String owner) {
    Lease lease = Fencing.currentLease().orElseThrow();
    return ctx.update(accounts)
        .set(OWNER, owner)
        .set(fenced.fenceColumn(accounts), fenced.token())
        .set(fenced.resourceColumn(accounts), lease.resource())
        .where(ID.eq(id))
        .and(fenced.guard(accounts))
        .execute();
  }

  @Test
  void shouldReturnZeroForAMissingRowWithTheCurrentToken() {
    assertThat(setOwner(current, 404, "B")).isZero();
  }

  @Test
  void shouldRefuseAGuardedWriteOutsideAScope() {
    assertThatThrownBy(() -> fenced.update(ctx, accounts, Map.of(OWNER, "X"), ID.eq(1L)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Fencing.run");
  }

  /** Exactly the documented rejection: a {@link StaleTokenException} naming both registrations. */
  private void assertRejectedAsStale(ThrowingCallable write) {
    assertThatThrownBy(write)
        .isExactlyInstanceOf(DataAccessException.class)
        .cause()
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.resource()).isEqualTo(stale.resource());
              assertThat(e.attemptedToken()).isEqualTo(stale.token().value());
              assertThat(e.currentToken()).isEqualTo(current.token().value());
            });
  }
}
