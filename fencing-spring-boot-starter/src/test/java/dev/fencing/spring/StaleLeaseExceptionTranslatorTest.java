package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.dao.PersistenceExceptionTranslationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.stereotype.Repository;

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
}
