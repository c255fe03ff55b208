package dev.fencing.spring.internal;

import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import java.sql.SQLException;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.Ordered;

/**
 * Wraps each {@link DataSource} bean of the application, once, in a {@link FencedDataSource}: the
 * bean itself is replaced, so there is no second data source, and everything that uses the bean
 * (Flyway, the transaction manager, JdbcTemplate, pool metrics through {@code unwrap}) uses the
 * fenced one.
 */
public final class FencedDataSourcePostProcessor
    implements BeanPostProcessor, Ordered, ApplicationListener<ContextRefreshedEvent> {

  private final Supplier<FenceOptions> options;
  private final FenceObserver observer;
  private final Supplier<UnscopedWrites> unscopedWrites;
  private volatile UnscopedWrites checking;

  /**
   * Creates the post-processor.
   *
   * @param options the fence options, read when the first data source is wrapped
   * @param observer told of every stale write the wrapped data sources reject
   */
  public FencedDataSourcePostProcessor(Supplier<FenceOptions> options, FenceObserver observer) {
    this(options, observer, () -> null);
  }

  /**
   * Creates the post-processor.
   *
   * @param options the fence options, read when the first data source is wrapped
   * @param observer told of every stale write the wrapped data sources reject
   * @param unscopedWrites the check of writes on fenced tables outside any scope, read when the
   *     first data source is wrapped (null: none); armed when the context is refreshed
   */
  public FencedDataSourcePostProcessor(
      Supplier<FenceOptions> options,
      FenceObserver observer,
      Supplier<UnscopedWrites> unscopedWrites) {
    this.options = options;
    this.observer = observer;
    this.unscopedWrites = unscopedWrites;
  }

  @Override
  public void onApplicationEvent(ContextRefreshedEvent event) {
    UnscopedWrites check = checking;
    if (check != null) {
      check.arm();
    }
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (bean instanceof DataSource dataSource && !isFenced(dataSource)) {
      FenceOptions fenceOptions = options.get();
      DataSource wrapped = dataSource;
      if (!fenceOptions.triggerMode()) {
        UnscopedWrites check = unscopedWrites.get();
        if (check != null) {
          checking = check;
          wrapped = check.screen(dataSource);
        }
      }
      try {
        return FencedDataSource.wrap(wrapped, fenceOptions, observer);
      } catch (IllegalStateException rewriterMissing) {
        if (fenceOptions.plainSql() != FenceOptions.PlainSql.REWRITE
            || !(rewriterMissing.getCause() instanceof LinkageError)) {
          throw rewriterMissing;
        }
        throw new IllegalStateException(
            "fencing.plain-sql is rewrite (the default): plain SQL that writes fenced tables is"
                + " rewritten into its guarded form with jOOQ's parser, which needs org.jooq:jooq"
                + " (3.19) on the class path. Add that dependency, or set fencing.plain-sql=refuse"
                + " (such statements are then refused; trigger mode, GuardedStatements and FencedDsl"
                + " need no jOOQ parser) — data source bean '"
                + beanName
                + "'",
            rewriterMissing);
      }
    }
    return bean;
  }

  private static boolean isFenced(DataSource dataSource) {
    if (dataSource instanceof FencedDataSource) {
      return true;
    }
    try {
      return dataSource.isWrapperFor(FencedDataSource.class);
    } catch (SQLException e) {
      return false;
    }
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
