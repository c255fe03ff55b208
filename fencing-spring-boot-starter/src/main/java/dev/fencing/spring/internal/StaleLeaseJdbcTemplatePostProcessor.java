package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseExceptionTranslator;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.support.JdbcAccessor;

/**
 * Puts the stale-write translation in front of the exception translator of every {@code
 * JdbcTemplate} bean (Boot's own and the application's), keeping that translator for everything
 * else.
 */
public final class StaleLeaseJdbcTemplatePostProcessor implements BeanPostProcessor {

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof JdbcAccessor accessor) {
      accessor.setExceptionTranslator(
          StaleLeaseExceptionTranslator.before(accessor.getExceptionTranslator()));
    }
    return bean;
  }
}
