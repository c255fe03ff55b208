package dev.fencing.spring.internal;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.LeaseUnavailableException;
import dev.fencing.jdbc.Fencing;
import dev.fencing.spring.Fenced;
import dev.fencing.spring.StaleLeaseExceptionTranslator;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** The advice of {@link Fenced}: acquire, register, run in the fencing scope, release. */
public final class FencedMethodInterceptor implements MethodInterceptor {

  private static final Logger log = LoggerFactory.getLogger(FencedMethodInterceptor.class);

  private final Supplier<LeaseManager> leaseManager;
  private final Supplier<DataSource> dataSource;
  private final Environment environment;
  private final Supplier<StaleLeaseExceptionTranslator> translator;
  private final int order;
  private final Map<Method, Settings> settingsByMethod = new ConcurrentHashMap<>();
  private volatile LeaseManager scopeLeases;

  /**
   * Creates the interceptor.
   *
   * @param leaseManager the manager to acquire through, whose leases are registered in the fence of
   *     {@code dataSource}; looked up at the first call
   * @param dataSource the data source whose transaction-bound connection the method must not run
   *     in, looked up at each call
   * @param environment resolves placeholders in the annotation's attributes
   * @param translator translates what leaves the method carrying "no longer the holder"
   * @param order the order of this advice, for the fail-fast message
   */
  public FencedMethodInterceptor(
      Supplier<LeaseManager> leaseManager,
      Supplier<DataSource> dataSource,
      Environment environment,
      Supplier<StaleLeaseExceptionTranslator> translator,
      int order) {
    this.leaseManager = leaseManager;
    this.dataSource = dataSource;
    this.environment = environment;
    this.translator = translator;
    this.order = order;
  }

  private record Settings(
      String resource, LeaseRequest request, Fenced.OnUnavailable onUnavailable) {}

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Method method = invocation.getMethod();
    Class<?> targetClass =
        invocation.getThis() == null ? method.getDeclaringClass() : invocation.getThis().getClass();
    Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
    Settings settings = settingsByMethod.computeIfAbsent(specific, this::settings);
    requireNoTransaction(specific, dataSource.get());
    Optional<Lease> acquired = leases().tryAcquire(settings.resource(), settings.request());
    if (acquired.isEmpty()) {
      if (settings.onUnavailable() == Fenced.OnUnavailable.FAIL) {
        throw new LeaseUnavailableException(settings.resource(), settings.request().maxWait());
      }
      log.debug(
          "{} skipped: the lease on \"{}\" is held elsewhere",
          describe(specific),
          settings.resource());
      return null;
    }
    try (Lease lease = acquired.get()) {
      return Fencing.call(lease, () -> proceed(invocation));
    } catch (ProceedFailure failure) {
      throw failure.getCause();
    } catch (Exception e) {
      throw StaleLeaseTranslation.translated(translator.get(), e);
    }
  }

  private static Object proceed(MethodInvocation invocation) throws Exception {
    try {
      return invocation.proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new ProceedFailure(t);
    }
  }

  /** Carries a throwable that is neither an exception nor an error through the scope. */
  private static final class ProceedFailure extends Exception {
    private static final long serialVersionUID = 1L;

    ProceedFailure(Throwable cause) {
      super(cause);
    }
  }

  private LeaseManager leases() {
    LeaseManager result = scopeLeases;
    if (result == null) {
      result = leaseManager.get();
      scopeLeases = result;
    }
    return result;
  }

  private void requireNoTransaction(Method method, DataSource data) {
    boolean transaction = TransactionSynchronizationManager.isActualTransactionActive();
    boolean boundConnection = TransactionSynchronizationManager.hasResource(data);
    if (!transaction && !boundConnection) {
      return;
    }
    throw new IllegalStateException(
        "@Fenced "
            + describe(method)
            + " was called inside "
            + (transaction ? "a transaction" : "a scope with a transaction-bound connection")
            + ": its connection was taken before the lease existed and would not be fenced, so"
            + " the method was not run. Put @Fenced outside @Transactional: call the @Fenced"
            + " method from outside any transaction and do the transactional work in it or in"
            + " a @Transactional method it calls. On one method both annotations work, since the"
            + " @Fenced advice (order "
            + describeOrder(order)
            + ") runs before the transaction advice, unless @EnableTransactionManagement(order ="
            + " ...) gives the transaction advice a smaller order.");
  }

  /** An order as a reader would write it: near either end, relative to that end's constant. */
  static String describeOrder(int order) {
    long fromHighest = (long) order - Ordered.HIGHEST_PRECEDENCE;
    long fromLowest = (long) Ordered.LOWEST_PRECEDENCE - order;
    if (fromHighest < 1_000_000) {
      return "Ordered.HIGHEST_PRECEDENCE" + (fromHighest == 0 ? "" : " + " + fromHighest);
    }
    if (fromLowest < 1_000_000) {
      return "Ordered.LOWEST_PRECEDENCE" + (fromLowest == 0 ? "" : " - " + fromLowest);
    }
    return Integer.toString(order);
  }

  private Settings settings(Method method) {
    Fenced fenced = AnnotatedElementUtils.findMergedAnnotation(method, Fenced.class);
    if (fenced == null) {
      throw new IllegalStateException(describe(method) + " has no @Fenced annotation");
    }
    String resource = environment.resolveRequiredPlaceholders(fenced.resource());
    Duration leaseTime = duration(method, "leaseTime", fenced.leaseTime());
    Duration maxWait = duration(method, "maxWait", fenced.maxWait());
    try {
      LeaseRequest request = LeaseRequest.forLeaseTime(leaseTime).withMaxWait(maxWait);
      return new Settings(
          resource, fenced.renew() ? request : request.withoutRenewal(), fenced.onUnavailable());
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@Fenced on " + describe(method) + ": " + e.getMessage(), e);
    }
  }

  private Duration duration(Method method, String attribute, String value) {
    String resolved = environment.resolveRequiredPlaceholders(value);
    try {
      return DurationStyle.detectAndParse(resolved);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "@Fenced on "
              + describe(method)
              + ": "
              + attribute
              + " \""
              + resolved
              + "\" is not a duration (use 30s, 5m, PT30S)",
          e);
    }
  }

  private static String describe(Method method) {
    return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
  }
}
