package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseExceptionTranslator;
import dev.fencing.spring.StaleLeaseWriteException;
import java.lang.reflect.Method;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttributeSource;

/**
 * The advice at the boundary of {@code @Transactional} methods, outside the transaction advice:
 * whatever carries a refusal ("no longer the holder": the transaction's begin failing with {@code
 * CannotCreateTransactionException}, its commit with {@code TransactionSystemException}, a JPA
 * flush with a Hibernate exception, a {@code LeaseLostException} from a JDBC call) leaves the
 * method as {@link StaleLeaseWriteException}.
 */
public final class StaleLeaseTranslation implements MethodInterceptor {

  private final Supplier<StaleLeaseExceptionTranslator> translator;

  /**
   * Creates the advice.
   *
   * @param translator the starter's translator, looked up at each translation
   */
  public StaleLeaseTranslation(Supplier<StaleLeaseExceptionTranslator> translator) {
    this.translator = translator;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    try {
      return invocation.proceed();
    } catch (Exception e) {
      throw translated(translator.get(), e);
    }
  }

  /**
   * Returns {@code failure} as a {@link StaleLeaseWriteException} if it carries a refusal, else
   * {@code failure} itself.
   *
   * @param translator the translator
   * @param failure the failure
   * @return what to throw
   */
  public static Exception translated(StaleLeaseExceptionTranslator translator, Exception failure) {
    DataAccessException stale = translator.translateFencing(null, null, failure);
    return stale == null ? failure : stale;
  }

  /**
   * Returns the pointcut of the methods that run in a transaction by annotation ({@code
   * org.springframework.transaction.annotation.Transactional}, or {@code
   * jakarta.transaction.Transactional}), public or not, as the transaction advice sees them.
   *
   * @return the pointcut
   */
  public static StaticMethodMatcherPointcut transactionalMethods() {
    TransactionAttributeSource attributes = new AnnotationTransactionAttributeSource(false);
    return new StaticMethodMatcherPointcut() {
      @Override
      public boolean matches(Method method, Class<?> targetClass) {
        return attributes.getTransactionAttribute(method, targetClass) != null;
      }
    };
  }
}
