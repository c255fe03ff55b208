package dev.fencing.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The target tables the unscoped-write check reads from a statement's text. */
class UnscopedWriteTargetsTest {

  @Test
  void targetsOfTheWritesOrmsAndTeamsSend() {
    assertThat(UnscopedWrites.WriteTargets.of("insert into charges (customer_id) values (?)"))
        .containsExactly("charges");
    assertThat(UnscopedWrites.WriteTargets.of("INSERT INTO \"Billing\".\"Charges\" VALUES (1)"))
        .containsExactly("billing.charges");
    assertThat(UnscopedWrites.WriteTargets.of("update only public.charges set x = 1 where id = ?"))
        .containsExactly("public.charges");
    assertThat(UnscopedWrites.WriteTargets.of("/* c */ DELETE FROM charges WHERE id = ?"))
        .containsExactly("charges");
    assertThat(
            UnscopedWrites.WriteTargets.of(
                "merge into charges c using x on true when matched"
                    + " then update set amount = 1"))
        .contains("charges");
    assertThat(UnscopedWrites.WriteTargets.of("TRUNCATE TABLE a, only b.c"))
        .containsExactly("a", "b.c");
    assertThat(
            UnscopedWrites.WriteTargets.of(
                "WITH x AS (UPDATE charges SET a = 1 RETURNING id)" + " SELECT * FROM x"))
        .containsExactly("charges");
    assertThat(UnscopedWrites.WriteTargets.of("insert into audit select * from charges"))
        .containsExactly("audit");
    assertThat(
            UnscopedWrites.WriteTargets.of(
                "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE" + " SET v = 2"))
        .containsExactly("t");
  }

  @Test
  void readsLocksAndLiteralsAreNotWrites() {
    assertThat(UnscopedWrites.WriteTargets.of("SELECT * FROM charges FOR UPDATE")).isEmpty();
    assertThat(UnscopedWrites.WriteTargets.of("select 'insert into charges' from dual")).isEmpty();
    assertThat(UnscopedWrites.WriteTargets.of("-- update charges\nselect 1")).isEmpty();
    assertThat(UnscopedWrites.WriteTargets.of("SHOW idle_in_transaction_session_timeout"))
        .isEmpty();
  }
}
