package dev.fencing.spring;

import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.jdbc.FencedLeaseManager;
import dev.fencing.spring.internal.Observers;
import dev.fencing.testing.InMemoryLeaseManager;
import dev.fencing.testing.SettableClock;
import dev.fencing.testing.StaleWriterProbe;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Leases without Redis for a Spring Boot test, with {@code fencing.test.in-memory-leases=true} and
 * {@code fencing-test-support} on the class path: the application's {@link LeaseManager} is a
 * {@link FencedLeaseManager} over an {@link InMemoryLeaseManager} (registered in the fence of the
 * application's fenced {@code DataSource}, as the Redis one would be), and a {@link
 * StaleWriterProbe} bean on that data source proves the application's DAOs are fenced. It comes
 * before {@link FencingAutoConfiguration}, so neither a Redis lease manager nor a {@code
 * RedissonClient} is needed; a {@code LeaseManager} the application defines itself still wins.
 *
 * <p>With {@code fencing.lock-only=true} the lease manager is the in-memory one, registered in no
 * fence, and there is no probe (nothing is fenced). With {@code fencing.enabled=false} nothing is
 * configured.
 */
@AutoConfiguration(
    after = DataSourceAutoConfiguration.class,
    before = FencingAutoConfiguration.class)
@ConditionalOnClass(name = "dev.fencing.testing.InMemoryLeaseManager")
@ConditionalOnProperty(prefix = "fencing.test", name = "in-memory-leases", havingValue = "true")
@ConditionalOnProperty(prefix = "fencing", name = "enabled", matchIfMissing = true)
@ConditionalOnBean(DataSource.class)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingTestAutoConfiguration {

  /** Creates the auto-configuration. */
  public FencingTestAutoConfiguration() {}

  /**
   * The fenced lease manager over an in-memory one.
   *
   * @param dataSource the application's (fenced) data source
   * @param properties the lease options
   * @param leaseObservers told of acquisitions, losses and releases
   * @param fenceObservers told of registrations and counter recoveries
   * @return the manager; closing it closes the in-memory manager
   * @throws IllegalStateException if the {@code DataSource} bean is not fenced
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LeaseManager.class)
  @ConditionalOnProperty(
      prefix = "fencing",
      name = "lock-only",
      havingValue = "false",
      matchIfMissing = true)
  public FencedLeaseManager inMemoryFencedLeaseManager(
      DataSource dataSource,
      FencingProperties properties,
      ObjectProvider<LeaseObserver> leaseObservers,
      ObjectProvider<FenceObserver> fenceObservers) {
    return new FencedLeaseManager(
        inMemory(properties, leaseObservers),
        FencingAutoConfiguration.fenced(dataSource).fence(),
        Observers.fence(fenceObservers));
  }

  /**
   * The lease manager of {@code fencing.lock-only=true}: in-memory leases, registered in no fence.
   *
   * @param properties the lease options
   * @param leaseObservers told of acquisitions, losses and releases
   * @return the manager
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(LeaseManager.class)
  @ConditionalOnProperty(prefix = "fencing", name = "lock-only", havingValue = "true")
  public InMemoryLeaseManager lockOnlyInMemoryLeaseManager(
      FencingProperties properties, ObjectProvider<LeaseObserver> leaseObservers) {
    return inMemory(properties, leaseObservers);
  }

  /**
   * The stale-writer probe on the application's fenced data source (the connection's current
   * schema, leases of its own on a random resource; its {@code with} methods return adjusted
   * copies).
   *
   * @param dataSource the application's (fenced) data source
   * @return the probe
   * @throws IllegalStateException if the {@code DataSource} bean is not fenced
   */
  @Bean
  @ConditionalOnMissingBean(StaleWriterProbe.class)
  @ConditionalOnProperty(
      prefix = "fencing",
      name = "lock-only",
      havingValue = "false",
      matchIfMissing = true)
  public StaleWriterProbe staleWriterProbe(DataSource dataSource) {
    return StaleWriterProbe.on(FencingAutoConfiguration.fenced(dataSource));
  }

  private static InMemoryLeaseManager inMemory(
      FencingProperties properties, ObjectProvider<LeaseObserver> leaseObservers) {
    return InMemoryLeaseManager.create(
        properties.toLeaseOptions(), Observers.lease(leaseObservers), SettableClock.create());
  }
}
