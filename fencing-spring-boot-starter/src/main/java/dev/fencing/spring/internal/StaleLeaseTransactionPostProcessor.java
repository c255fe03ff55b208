package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseExceptionTranslator;
import dev.fencing.spring.StaleLeaseWriteException;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Translates "no longer the holder" where programmatic transactions surface it: the commit of a
 * {@link JdbcTransactionManager} (Boot's JDBC transaction manager; the stale-write translation is
 * put in front of its own translator), and {@link TransactionTemplate} beans, whose begin, callback
 * and commit failures leave {@code execute} as {@link StaleLeaseWriteException}.
 */
public final class StaleLeaseTransactionPostProcessor implements BeanPostProcessor {

  private final Supplier<StaleLeaseExceptionTranslator> translator;

  /**
   * Creates the post-processor.
   *
   * @param translator the starter's translator, looked up at each translation
   */
  public StaleLeaseTransactionPostProcessor(Supplier<StaleLeaseExceptionTranslator> translator) {
    this.translator = translator;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof JdbcTransactionManager manager) {
      SQLExceptionTranslator fallback = manager.getExceptionTranslator();
      manager.setExceptionTranslator(
          (task, sql, ex) -> {
            DataAccessException stale = translator.get().translateFencing(task, sql, ex);
            return stale != null ? stale : fallback.translate(task, sql, ex);
          });
    }
    if (bean.getClass() == TransactionTemplate.class) {
      TransactionTemplate template = (TransactionTemplate) bean;
      return new StaleLeaseTransactionTemplate(template, translator);
    }
    return bean;
  }

  /** A {@code TransactionTemplate} whose failures carrying a refusal are translated. */
  static final class StaleLeaseTransactionTemplate extends TransactionTemplate {
    private static final long serialVersionUID = 1L;

    private final transient Supplier<StaleLeaseExceptionTranslator> translator;

    StaleLeaseTransactionTemplate(
        TransactionTemplate template, Supplier<StaleLeaseExceptionTranslator> translator) {
      super(
          Objects.requireNonNull(
              template.getTransactionManager(),
              "the TransactionTemplate bean has no transaction manager"),
          template);
      this.translator = translator;
    }

    @Override
    public <T> T execute(TransactionCallback<T> action) throws TransactionException {
      try {
        return super.execute(action);
      } catch (RuntimeException e) {
        DataAccessException stale = translator.get().translateFencing(null, null, e);
        throw stale == null ? e : stale;
      }
    }
  }
}
