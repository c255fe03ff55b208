package dev.fencing.spring;

import dev.fencing.core.LeaseManager;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.shedlock.FencedLockOptions;
import dev.fencing.shedlock.FencedLockProvider;
import dev.fencing.spring.internal.LeaseTiming;
import dev.fencing.spring.internal.Observers;
import dev.fencing.spring.internal.ScopeLeases;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * A ShedLock {@link LockProvider} whose locks are fenced leases ({@link FencedLockProvider}), when
 * {@code fencing-shedlock} is on the classpath, fencing itself is configured and the application
 * defines no {@code LockProvider} of its own: {@code @SchedulerLock} tasks then run in the fencing
 * scope, on the lease manager and the {@code DataSource} of {@link FencingAutoConfiguration}.
 * Properties {@code fencing.shedlock.resource-prefix} and {@code fencing.shedlock.keep-alive};
 * {@code fencing.shedlock.enabled=false} turns it off.
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingMetricsAutoConfiguration.class})
@ConditionalOnClass({LockProvider.class, FencedLockProvider.class})
@ConditionalOnBean(FencingProperties.class)
@ConditionalOnProperty(prefix = "fencing.shedlock", name = "enabled", matchIfMissing = true)
public class FencingShedLockAutoConfiguration {

  /** Creates the auto-configuration. */
  public FencingShedLockAutoConfiguration() {}

  /**
   * The fenced ShedLock provider.
   *
   * @param leaseManager the lease manager (the starter's, or the application's own)
   * @param dataSource the application's (fenced) data source
   * @param properties the resource prefix and keep-alive mode
   * @param fenceObservers told of registrations when the lease manager is the application's own
   * @param timing times acquisitions, when the metrics auto-configuration applies
   * @return the provider
   * @throws IllegalArgumentException if {@code fencing.shedlock.resource-prefix} is invalid
   */
  @Bean
  @ConditionalOnMissingBean(LockProvider.class)
  @SuppressWarnings("exports") // LeaseTiming is internal: Spring supplies it, applications never do
  public FencedLockProvider fencedLockProvider(
      LeaseManager leaseManager,
      DataSource dataSource,
      FencingProperties properties,
      ObjectProvider<FenceObserver> fenceObservers,
      ObjectProvider<LeaseTiming> timing) {
    FencingProperties.ShedLock shedlock = properties.getShedlock();
    FencedLockOptions options =
        FencedLockOptions.defaults().withResourcePrefix(shedlock.getResourcePrefix());
    LeaseManager leases =
        properties.isLockOnly()
            ? ScopeLeases.lockOnly(leaseManager, timing.getIfAvailable())
            : ScopeLeases.of(
                leaseManager,
                FencingAutoConfiguration.fenced(dataSource),
                Observers.fence(fenceObservers),
                timing.getIfAvailable());
    return new FencedLockProvider(
        leases, shedlock.isKeepAlive() ? options.withKeepAlive() : options);
  }
}
