package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseExceptionTranslator;
import dev.fencing.spring.StaleLeaseWriteException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.support.JdbcTransactionManager;
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

  /** Creates the post-processor. */
  public StaleLeaseTransactionPostProcessor() {}

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof JdbcTransactionManager manager) {
      manager.setExceptionTranslator(
          StaleLeaseExceptionTranslator.before(manager.getExceptionTranslator()));
    }
    if (bean.getClass() == TransactionTemplate.class) {
      TransactionTemplate template = (TransactionTemplate) bean;
      return new StaleLeaseTransactionTemplate(template);
    }
    return bean;
  }

  /** A {@code TransactionTemplate} whose failures carrying a refusal are translated. */
  static final class StaleLeaseTransactionTemplate extends TransactionTemplate {
    private static final long serialVersionUID = 1L;

    StaleLeaseTransactionTemplate(TransactionTemplate template) {
      super(template.getTransactionManager(), template);
    }

    @Override
    public <T> T execute(TransactionCallback<T> action) throws TransactionException {
      try {
        return super.execute(action);
      } catch (RuntimeException e) {
        StaleLeaseWriteException stale = StaleLeaseExceptionTranslator.translate(null, null, e);
        throw stale == null ? e : stale;
      }
    }
  }
}
