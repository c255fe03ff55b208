package dev.fencing.spring;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.spring.internal.FenceMigrationsInitializer;
import dev.fencing.spring.internal.FencedDataSourcePostProcessor;
import dev.fencing.spring.internal.FencedMethodInterceptor;
import dev.fencing.spring.internal.LeaseTiming;
import dev.fencing.spring.internal.Observers;
import dev.fencing.spring.internal.RefusalCounting;
import dev.fencing.spring.internal.RefusalObserver;
import dev.fencing.spring.internal.RegistrationWatch;
import dev.fencing.spring.internal.ScopeLeases;
import dev.fencing.spring.internal.StaleLeaseJdbcTemplatePostProcessor;
import dev.fencing.spring.internal.StaleLeaseTransactionPostProcessor;
import dev.fencing.spring.internal.StaleLeaseTranslation;
import dev.fencing.spring.internal.UnscopedWrites;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.redisson.api.RedissonClient;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.flyway.FlywayMigrationInitializer;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Auto-configuration of fencing for a Spring Boot application with a {@link DataSource} and a
 * {@link RedissonClient} (or its own {@link LeaseManager}):
 *
 * <ul>
 *   <li>the application's {@code DataSource} bean is wrapped, once, in a {@link FencedDataSource}
 *       (no second data source bean);
 *   <li>a {@link FencedLeaseManager} over a {@link RedisLeaseManager} on the application's {@code
 *       RedissonClient}, unless the application defines a {@code LeaseManager};
 *   <li>{@link Fenced} methods;
 *   <li>stale writes translated into {@link StaleLeaseWriteException};
 *   <li>the fence migrations, after the application's own Flyway migrations.
 * </ul>
 *
 * <p>{@link FencingMetricsAutoConfiguration} adds the meters (with {@code fencing-micrometer} and a
 * {@code MeterRegistry}), {@link FencingShedLockAutoConfiguration} a ShedLock {@code LockProvider}
 * (with {@code fencing-shedlock}).
 *
 * <p>Switched off with {@code fencing.enabled=false}; with {@code fencing.lock-only=true} the
 * leases are taken as usual but neither the data source is wrapped nor leases registered.
 */
@AutoConfiguration(
    after = DataSourceAutoConfiguration.class,
    afterName = {
      "org.redisson.spring.starter.RedissonAutoConfigurationV2",
      "org.redisson.spring.starter.RedissonAutoConfiguration"
    },
    beforeName = {
      "org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration",
      "org.springframework.boot.autoconfigure.flyway.FlywayAutoConfiguration"
    })
@ConditionalOnClass({DataSource.class, RedissonClient.class})
@ConditionalOnProperty(prefix = "fencing", name = "enabled", matchIfMissing = true)
@ConditionalOnBean(DataSource.class)
@Conditional(FencingAutoConfiguration.OnLeaseSource.class)
@EnableConfigurationProperties(FencingProperties.class)
@Import(FencingAutoConfiguration.AutoProxyRegistrar.class)
public class FencingAutoConfiguration {

  /**
   * The order of the {@link Fenced} advice: before the transaction advice (whose default order is
   * {@link Ordered#LOWEST_PRECEDENCE}), so the lease exists before a transaction takes its
   * connection.
   */
  public static final int FENCED_ADVICE_ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

  /**
   * The order of the advice that translates, at the boundary of {@code @Transactional} methods,
   * every failure carrying "no longer the holder" into {@link StaleLeaseWriteException}: just
   * before the transaction advice (order {@link Ordered#LOWEST_PRECEDENCE} unless
   * {@code @EnableTransactionManagement(order = ...)} says otherwise), so it sees the failures of
   * the transaction's begin and commit too.
   */
  public static final int STALE_LEASE_TRANSLATION_ORDER = Ordered.LOWEST_PRECEDENCE - 1;

  /** Creates the auto-configuration. */
  public FencingAutoConfiguration() {}

  /** Matches when there is something to get leases from. */
  static final class OnLeaseSource extends AnyNestedCondition {
    OnLeaseSource() {
      super(ConfigurationPhase.REGISTER_BEAN);
    }

    @ConditionalOnBean(RedissonClient.class)
    static final class RedissonPresent {}

    @ConditionalOnBean(LeaseManager.class)
    static final class LeaseManagerPresent {}
  }

  /** Makes sure advisor beans are applied, also in an application without other AOP. */
  static final class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {
    @Override
    public void registerBeanDefinitions(
        AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
    }
  }

  /**
   * Wraps the application's data source beans.
   *
   * @param environment the environment the {@code fencing.*} properties are read from
   * @param fenceObservers told of the stale writes the data source rejects (the meters, when the
   *     metrics auto-configuration applies), resolved at the first rejection
   * @return the post-processor
   */
  @Bean
  @ConditionalOnProperty(
      prefix = "fencing",
      name = "lock-only",
      havingValue = "false",
      matchIfMissing = true)
  static FencedDataSourcePostProcessor fencedDataSourcePostProcessor(
      Environment environment, ObjectProvider<FenceObserver> fenceObservers) {
    return new FencedDataSourcePostProcessor(
        () -> properties(environment).toFenceOptions(),
        Observers.deferredFence(fenceObservers),
        () -> {
          FencingProperties.UnscopedWrites mode = properties(environment).getUnscopedWrites();
          return mode == FencingProperties.UnscopedWrites.IGNORE ? null : new UnscopedWrites(mode);
        });
  }

  private static FencingProperties properties(Environment environment) {
    return Binder.get(environment).bindOrCreate("fencing", FencingProperties.class);
  }

  /**
   * The fenced lease manager on the application's Redisson client.
   *
   * @param redisson the application's client
   * @param dataSource the application's (fenced) data source
   * @param properties the properties
   * @param leaseObservers told of acquisitions, losses and releases (the meters, when the metrics
   *     auto-configuration applies)
   * @param fenceObservers told of registrations and counter recoveries
   * @param registrations the registrations in flight, shown by the health indicator
   * @return the manager; closing it closes the Redis lease manager, not the client
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LeaseManager.class)
  @ConditionalOnBean(RedissonClient.class)
  @ConditionalOnProperty(
      prefix = "fencing",
      name = "lock-only",
      havingValue = "false",
      matchIfMissing = true)
  @SuppressWarnings("exports") // RegistrationWatch is internal: Spring supplies it
  public FencedLeaseManager fencedLeaseManager(
      RedissonClient redisson,
      DataSource dataSource,
      FencingProperties properties,
      ObjectProvider<LeaseObserver> leaseObservers,
      ObjectProvider<FenceObserver> fenceObservers,
      RegistrationWatch registrations) {
    return new FencedLeaseManager(
        registrations.watching(
            RedisLeaseManager.create(
                redisson, properties.toLeaseOptions(), Observers.lease(leaseObservers))),
        fenced(dataSource).fence(),
        Observers.fence(fenceObservers));
  }

  /**
   * The registrations in the fence this instance is making now, for the health indicator; told of
   * their end as a {@link FenceObserver}.
   *
   * @return the watch
   */
  @Bean
  @ConditionalOnProperty(
      prefix = "fencing",
      name = "lock-only",
      havingValue = "false",
      matchIfMissing = true)
  @SuppressWarnings("exports") // internal: Spring supplies it, applications never do
  public RegistrationWatch fencingRegistrationWatch() {
    return new RegistrationWatch();
  }

  /**
   * The lease manager of {@code fencing.lock-only=true}: leases on the application's Redisson
   * client, not registered in any fence.
   *
   * @param redisson the application's client
   * @param properties the properties
   * @param leaseObservers told of acquisitions, losses and releases
   * @return the manager; closing it does not close the client
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LeaseManager.class)
  @ConditionalOnBean(RedissonClient.class)
  @ConditionalOnProperty(prefix = "fencing", name = "lock-only", havingValue = "true")
  public RedisLeaseManager lockOnlyLeaseManager(
      RedissonClient redisson,
      FencingProperties properties,
      ObjectProvider<LeaseObserver> leaseObservers) {
    return RedisLeaseManager.create(
        redisson, properties.toLeaseOptions(), Observers.lease(leaseObservers));
  }

  /** Whether {@code fencing.lock-only} is set. */
  static boolean lockOnly(Environment environment) {
    return Binder.get(environment).bind("fencing.lock-only", Boolean.class).orElse(false);
  }

  /**
   * The advisor of {@link Fenced} methods, ordered before the transaction advice.
   *
   * @param leaseManager the lease manager
   * @param dataSource the data source
   * @param fenceObservers told of registrations when the lease manager is the application's own
   * @param timing times acquisitions, when the metrics auto-configuration applies
   * @param translator translates what leaves the method carrying "no longer the holder"
   * @param environment resolves placeholders in the annotation's attributes
   * @return the advisor
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor fencedMethodAdvisor(
      ObjectProvider<LeaseManager> leaseManager,
      ObjectProvider<DataSource> dataSource,
      ObjectProvider<FenceObserver> fenceObservers,
      ObjectProvider<LeaseTiming> timing,
      ObjectProvider<StaleLeaseExceptionTranslator> translator,
      Environment environment) {
    FencedMethodInterceptor interceptor =
        new FencedMethodInterceptor(
            () ->
                lockOnly(environment)
                    ? ScopeLeases.lockOnly(leaseManager.getObject(), timing.getIfAvailable())
                    : ScopeLeases.of(
                        leaseManager.getObject(),
                        fenced(dataSource.getObject()),
                        Observers.fence(fenceObservers),
                        timing.getIfAvailable()),
            () -> lockOnly(environment) ? dataSource.getObject() : fenced(dataSource.getObject()),
            environment,
            translator::getObject,
            FENCED_ADVICE_ORDER);
    DefaultPointcutAdvisor advisor =
        new DefaultPointcutAdvisor(
            new AnnotationMatchingPointcut(null, Fenced.class, true), interceptor);
    advisor.setOrder(FENCED_ADVICE_ORDER);
    return advisor;
  }

  /**
   * Translates stale writes for every {@code JdbcTemplate} bean, in front of its own translator.
   * (Boot 3.5's {@code JdbcTemplate} auto-configuration does not take an {@code
   * SQLExceptionTranslator} bean, so the template itself is post-processed.)
   *
   * @param translator the translator, resolved at the first translation
   * @return the post-processor
   */
  @Bean
  static StaleLeaseJdbcTemplatePostProcessor staleLeaseJdbcTemplatePostProcessor(
      ObjectProvider<StaleLeaseExceptionTranslator> translator) {
    return new StaleLeaseJdbcTemplatePostProcessor(translator::getObject);
  }

  /**
   * Translates "no longer the holder" at the boundary of {@code @Transactional} methods, outside
   * the transaction advice: the failures of the transaction's begin ({@code
   * CannotCreateTransactionException}), of its commit ({@code TransactionSystemException}, JPA's
   * flush at commit), of JPA and Spring Data calls and the unchecked {@code LeaseLostException}
   * leave the method as {@link StaleLeaseWriteException}.
   *
   * @param translator the translator, resolved at the first translation
   * @return the advisor
   */
  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor staleLeaseTransactionBoundaryAdvisor(
      ObjectProvider<StaleLeaseExceptionTranslator> translator) {
    DefaultPointcutAdvisor advisor =
        new DefaultPointcutAdvisor(
            StaleLeaseTranslation.transactionalMethods(),
            new StaleLeaseTranslation(translator::getObject));
    advisor.setOrder(STALE_LEASE_TRANSLATION_ORDER);
    return advisor;
  }

  /**
   * Translates "no longer the holder" in programmatic transactions: {@code TransactionTemplate}
   * beans and the commit of Boot's JDBC transaction manager.
   *
   * @param translator the translator, resolved at the first translation
   * @return the post-processor
   */
  @Bean
  static StaleLeaseTransactionPostProcessor staleLeaseTransactionPostProcessor(
      ObjectProvider<StaleLeaseExceptionTranslator> translator) {
    return new StaleLeaseTransactionPostProcessor(translator::getObject);
  }

  /**
   * Translates stale writes in {@code @Repository} beans, before the JPA provider's translator, and
   * wherever else the starter translates; tells the {@code RefusalObserver} beans (the meters) once
   * of each write the JVM refused.
   *
   * @param refusalObservers told of the JVM's refusals
   * @return the translator
   */
  @Bean
  @Order(Ordered.HIGHEST_PRECEDENCE)
  @SuppressWarnings(
      "exports") // RefusalObserver is internal: Spring supplies it, applications never do
  public StaleLeaseExceptionTranslator staleLeaseExceptionTranslator(
      ObjectProvider<RefusalObserver> refusalObservers) {
    return new StaleLeaseExceptionTranslator(new RefusalCounting(refusalObservers));
  }

  /**
   * The {@code fencing} health indicator, with Actuator: the Redis backend answers and the fence
   * schema holds the contract version; {@code management.health.fencing.enabled=false} turns it
   * off.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
  @ConditionalOnProperty(
      prefix = "management.health.fencing",
      name = "enabled",
      matchIfMissing = true)
  static class Health {

    @Bean
    @ConditionalOnMissingBean(name = "fencingHealthIndicator")
    dev.fencing.spring.internal.FencingHealthIndicator fencingHealthIndicator(
        ObjectProvider<RedissonClient> redisson,
        DataSource dataSource,
        FencingProperties properties,
        ObjectProvider<RegistrationWatch> registrations) {
      return new dev.fencing.spring.internal.FencingHealthIndicator(
          redisson.getIfUnique(),
          properties.getKeyPrefix(),
          dataSource,
          properties.getSchema(),
          registrations.getIfAvailable(),
          properties.getRegistrationLockTimeout());
    }
  }

  /** The fence migrations, after the application's Flyway migrations. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "fencing.migrations", name = "enabled", matchIfMissing = true)
  static class Migrations {

    @Bean
    FenceMigrationsInitializer fenceMigrationsInitializer(
        DataSource dataSource,
        FencingProperties properties,
        ObjectProvider<FlywayMigrationInitializer> applicationMigrations) {
      FencingProperties.Migrations migrations = properties.getMigrations();
      MigrationOptions.Builder options =
          MigrationOptions.builder()
              .schema(properties.getSchema())
              .fence(migrations.getTables().toArray(String[]::new));
      for (String table : migrations.getEnforce()) {
        options.enforce(table, migrations.getEnforcementMode());
      }
      return new FenceMigrationsInitializer(dataSource, options.build(), applicationMigrations);
    }
  }

  /**
   * Returns the fenced data source behind a {@code DataSource} bean.
   *
   * @param dataSource the bean
   * @return the fenced data source
   * @throws IllegalStateException if the bean was not wrapped
   */
  static FencedDataSource fenced(DataSource dataSource) {
    try {
      return dataSource.unwrap(FencedDataSource.class);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "the DataSource bean is not a FencedDataSource; fencing wraps DataSource beans with a"
              + " post-processor, so the bean must have been replaced after it ran",
          e);
    }
  }
}
