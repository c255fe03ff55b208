package dev.fencing.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.schema.DatabaseProduct;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The plain-SQL rewriter writes its guard through {@link GuardedSql}, the builder of every guarded
 * statement: the fence check and the row guard it sends are the builder's, with the registration's
 * literals in the slots. (What the database then does with them is tested against the servers by
 * the rewriter's, the fuzzer's and the entry-point suites.)
 */
class GuardedSqlTest {

  private static final PlainDmlGuard.Registration CURRENT =
      new PlainDmlGuard.Registration("orders", 7, "lease-b", 2_500);

  @Test
  void theRewrittenStatementCarriesTheBuildersFenceCheckAndRowGuard() {
    FencedTables.Relation items = new FencedTables.Relation("app", "items");
    PlainDmlGuard guard =
        new PlainDmlGuard(
            "fence_x",
            FencedTables.of(
                Map.of(items, new FencedTables.Table("app", "items", true, false)), List.of()));
    GuardedSql builder = GuardedSql.of(DatabaseProduct.POSTGRESQL, "fence_x");

    PlainDmlGuard.Result result = guard.rewrite("UPDATE items SET v = ? WHERE id = ?", CURRENT);

    assertThat(result).isInstanceOf(PlainDmlGuard.Guarded.class);
    String sql = ((PlainDmlGuard.Guarded) result).sql();
    assertThat(sql)
        .contains(builder.fenceCheck("fencing_fence", "'orders'", "7", "'lease-b'", "'2500ms'"))
        .contains(GuardedSql.rowGuard("fence_token", "7", "fence_resource", "'orders'"));
  }

  @Test
  void eachDatabaseHasItsOwnFenceCheck() {
    String postgres =
        GuardedSql.of(DatabaseProduct.POSTGRESQL, "fx").fenceCheck("f", "'r'", "1", "'l'", "'1ms'");
    String mariaDb =
        GuardedSql.of(DatabaseProduct.MARIADB, "fx").fenceCheck("f", "'r'", "1", "'l'", "'1ms'");

    assertThat(postgres)
        .isEqualTo(
            "EXISTS (SELECT 1 FROM \"fx\".fence f WHERE f.resource = 'r' AND f.token = 1 AND"
                + " f.lease_id = 'l' AND f.epoch = \"fx\".fence_epoch() AND"
                + " set_config('idle_in_transaction_session_timeout', '1ms', true) IS NOT NULL"
                + " FOR SHARE OF f)");
    assertThat(mariaDb)
        .isEqualTo(
            "EXISTS (SELECT 1 FROM `fx`.`fence` f WHERE f.resource = 'r' AND f.token = 1 AND"
                + " f.lease_id = 'l' LOCK IN SHARE MODE)");
  }
}
