package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseExceptionTranslator;
import java.util.function.Supplier;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.support.JdbcAccessor;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * Puts the stale-write translation in front of the exception translator of every {@code
 * JdbcTemplate} bean (Boot's own and the application's), keeping that translator for everything
 * else.
 */
public final class StaleLeaseJdbcTemplatePostProcessor implements BeanPostProcessor {

  private final Supplier<StaleLeaseExceptionTranslator> translator;

  /**
   * Creates the post-processor.
   *
   * @param translator the starter's translator, looked up at each translation
   */
  public StaleLeaseJdbcTemplatePostProcessor(Supplier<StaleLeaseExceptionTranslator> translator) {
    this.translator = translator;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof JdbcAccessor accessor) {
      SQLExceptionTranslator fallback = accessor.getExceptionTranslator();
      accessor.setExceptionTranslator(
          new SQLExceptionTranslator() {
            @Override
            public DataAccessException translate(
                String task, String sql, java.sql.SQLException ex) {
              DataAccessException stale = translator.get().translateFencing(task, sql, ex);
              return stale != null ? stale : fallback.translate(task, sql, ex);
            }

            @Override
            public String toString() {
              return "stale writes, then " + fallback;
            }
          });
    }
    return bean;
  }
}
