package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.Lease;
import dev.fencing.jdbc.jooq.FencedDsl;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  private int setOwner(Lease lease, long id, String owner) {
    return Fencing.call(lease, () -> fenced.update(ctx, accounts, Map.of(OWNER, owner), ID.eq(id)));
  }

  @Test
  void shouldRejectAStaleUpdateOfARowTheSuccessorWrote() {
    fx.insertAccount(1, "nobody", 0);
    assertThat(setOwner(current, 1, "B")).isEqualTo(1);

    assertThatThrownBy(() -> setOwner(stale, 1, "A"))
        .isInstanceOfSatisfying(
            DataAccessException.class,
            e -> {
              StaleTokenException stale = (StaleTokenException) e.getCause();
              assertThat((Object) stale).isInstanceOf(StaleTokenException.class);
              assertThat(stale.currentToken()).isEqualTo(current.token().value());
            });
    assertThat(fx.ownerOf(1)).isEqualTo("B");
    assertThat(fx.queryLong("SELECT fence_token FROM " + fx.table("accounts") + " WHERE id = 1"))
        .isEqualTo(current.token().value());
  }

  @Test
  void shouldRejectAStaleUpdateOfARowTheSuccessorNeverTouched() {
    fx.insertAccount(2, "nobody", 0);
    assertThatThrownBy(() -> setOwner(stale, 2, "A")).isInstanceOf(DataAccessException.class);
    assertThat(fx.ownerOf(2)).isEqualTo("nobody");
  }

  @Test
  void withAPlainJooqUpdateTheStaleWriteLands() {
    fx.insertAccount(3, "nobody", 0);
    setOwner(current, 3, "B");
    int rows =
        Fencing.call(stale, () -> ctx.update(accounts).set(OWNER, "A").where(ID.eq(3L)).execute());
    assertThat(rows).isEqualTo(1);
    assertThat(fx.ownerOf(3)).as("the violation FencedDsl prevents").isEqualTo("A");
  }

  @Test
  void shouldInsertUpsertAndDeleteWithTheCurrentTokenOnly() {
    Map<Field<?>, Object> row = new LinkedHashMap<>();
    row.put(CUSTOMER, 1L);
    row.put(AMOUNT, 100L);
    assertThat(Fencing.call(current, () -> fenced.insert(ctx, charges, row))).isEqualTo(1);
    assertThatThrownBy(() -> Fencing.call(stale, () -> fenced.insert(ctx, charges, row)))
        .isInstanceOf(DataAccessException.class);

    row.put(AMOUNT, 250L);
    assertThat(Fencing.call(current, () -> fenced.upsert(ctx, charges, row, List.of(CUSTOMER))))
        .isEqualTo(1);
    row.put(AMOUNT, 999L);
    assertThatThrownBy(
            () -> Fencing.call(stale, () -> fenced.upsert(ctx, charges, row, List.of(CUSTOMER))))
        .isInstanceOf(DataAccessException.class);
    assertThat(fx.queryLong("SELECT amount FROM " + fx.table("charges"))).isEqualTo(250);

    assertThatThrownBy(
            () -> Fencing.call(stale, () -> fenced.delete(ctx, charges, CUSTOMER.eq(1L))))
        .isInstanceOf(DataAccessException.class);
    assertThat(Fencing.call(current, () -> fenced.delete(ctx, charges, CUSTOMER.eq(1L))))
        .isEqualTo(1);
    assertThat(fx.queryLong("SELECT count(*) FROM " + fx.table("charges"))).isZero();
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
}
