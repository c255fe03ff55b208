package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.core.FencingToken;
import dev.fencing.core.LeaseLostException;
import dev.fencing.jdbc.LeaseLostSQLException;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.dao.PersistenceExceptionTranslationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.CannotCreateTransactionException;

class StaleLeaseExceptionTranslatorTest {

  private static final SQLException STALE = new SQLException("stale fencing token", "ZF001");

  @Test
  void staleStateAnywhereInTheChainBecomesAStaleLeaseWriteException() {
    SQLException wrapped = new SQLException("batch failed", "XX000");
    wrapped.setNextException(STALE);
    assertThat(new StaleLeaseExceptionTranslator().translate("update", "UPDATE t", wrapped))
        .isInstanceOf(StaleLeaseWriteException.class)
        .isInstanceOf(NonTransientDataAccessException.class)
        .hasMessageContaining("stale fencing token");
  }

  @Test
  void everythingElseIsLeftToTheFallback() {
    SQLExceptionTranslator translator =
        StaleLeaseExceptionTranslator.before(new SQLExceptionSubclassTranslator());
    assertThat(translator.translate("insert", null, new SQLException("dup", "23505")))
        .isInstanceOf(DataIntegrityViolationException.class);
    assertThat(
            new StaleLeaseExceptionTranslator()
                .translateExceptionIfPossible(new RuntimeException()))
        .isNull();
  }

  /** A hand-written DAO that wraps the driver's exception, as many do. */
  @Repository
  static class LegacyDao {
    void write() {
      throw new IllegalStateException("write failed", STALE);
    }
  }

  @Test
  void repositoriesTranslateStaleWrites() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(PersistenceExceptionTranslationAutoConfiguration.class))
        .withBean(StaleLeaseExceptionTranslator.class)
        .withBean(LegacyDao.class)
        .run(
            context ->
                assertThatThrownBy(() -> context.getBean(LegacyDao.class).write())
                    .isInstanceOf(StaleLeaseWriteException.class));
  }

  @Test
  void theJvmsRefusalsInEveryFormBecomeAStaleLeaseWriteException() {
    LeaseLostException lost =
        new LeaseLostException("billing", new FencingToken(7), "it was lost (EXPIRED)");
    StaleLeaseExceptionTranslator translator = new StaleLeaseExceptionTranslator();
    List<DataAccessException> translated =
        List.of(
            translator.translate("update", "UPDATE t", new LeaseLostSQLException(lost)),
            translator.translateExceptionIfPossible(
                new CannotCreateTransactionException("Could not open JPA EntityManager", lost)),
            translator.translateExceptionIfPossible(lost));
    assertThat(translated)
        .allSatisfy(
            e -> {
              assertThat(e).isInstanceOf(StaleLeaseWriteException.class);
              StaleLeaseWriteException stale = (StaleLeaseWriteException) e;
              assertThat(stale.refusedBy()).isEqualTo(StaleLeaseWriteException.RefusedBy.JVM);
              assertThat(stale.resource()).hasValue("billing");
              assertThat(stale.attemptedToken()).hasValue(7);
              assertThat(stale.currentToken()).isEmpty();
              assertThat(stale.leaseLost()).containsSame(lost);
            });
    StaleLeaseWriteException bare =
        (StaleLeaseWriteException)
            translator.translate("update", null, new SQLException("lease lost", "ZF004"));
    assertThat(bare.refusedBy()).isEqualTo(StaleLeaseWriteException.RefusedBy.JVM);
    assertThat(bare.resource()).isEmpty();
  }
}
