package dev.fencing.spring;

import dev.fencing.core.LeaseObserver;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.micrometer.FencingMetrics;
import dev.fencing.spring.internal.LeaseTiming;
import dev.fencing.spring.internal.RefusalObserver;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Publishes fencing's meters ({@link FencingMetrics}) in the application's {@link MeterRegistry}
 * when {@code fencing-micrometer} is on the classpath, the registry is a bean and fencing itself is
 * configured: lease acquisitions, losses and active leases from the lease manager of {@link
 * FencingAutoConfiguration}, registrations and counter recoveries from the fence, the stale writes
 * the database rejects ({@code where=database}) and those the JVM refuses because the lease is
 * known lost ({@code where=jvm}, counted where the starter translates them into {@link
 * StaleLeaseWriteException}). The tag {@code resource} is added only with {@code
 * fencing.metrics.tag-resource=true}. An application's own {@code FencingMetrics} bean is used
 * instead of the starter's; {@code fencing.metrics.enabled=false} turns the meters off.
 */
@AutoConfiguration(
    after = FencingAutoConfiguration.class,
    afterName = {
      "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"
    })
@ConditionalOnClass({MeterRegistry.class, FencingMetrics.class})
@ConditionalOnBean({FencingProperties.class, MeterRegistry.class})
@ConditionalOnProperty(prefix = "fencing.metrics", name = "enabled", matchIfMissing = true)
public class FencingMetricsAutoConfiguration {

  /** Creates the auto-configuration. */
  public FencingMetricsAutoConfiguration() {}

  /**
   * The meters.
   *
   * @param registry the application's registry
   * @param properties whether to tag by resource
   * @return the meters
   */
  @Bean
  @ConditionalOnMissingBean
  public FencingMetrics fencingMetrics(MeterRegistry registry, FencingProperties properties) {
    return new FencingMetrics(registry, properties.getMetrics().isTagResource());
  }

  /**
   * The meters' lease observer, given to the lease manager of {@link FencingAutoConfiguration}.
   *
   * @param metrics the meters
   * @return the observer
   */
  @Bean
  public LeaseObserver fencingMetricsLeaseObserver(FencingMetrics metrics) {
    return metrics.leaseObserver();
  }

  /**
   * The meters' fence observer, given to the fenced lease manager and to the {@code DataSource}.
   *
   * @param metrics the meters
   * @return the observer
   */
  @Bean
  public FenceObserver fencingMetricsFenceObserver(FencingMetrics metrics) {
    return metrics.fenceObserver();
  }

  /**
   * Counts the writes the JVM refused because the lease was known lost ({@code
   * fencing.writes.rejected{where=jvm}}), as the starter's translation sees them.
   *
   * @param metrics the meters
   * @return the observer
   */
  @Bean
  RefusalObserver fencingMetricsRefusalObserver(FencingMetrics metrics) {
    return metrics::countRejected;
  }

  /**
   * Times the acquisitions of {@code @Fenced} methods and of the ShedLock provider.
   *
   * @param metrics the meters
   * @return the timing
   */
  @Bean
  LeaseTiming fencingMetricsLeaseTiming(FencingMetrics metrics) {
    return metrics::timed;
  }
}
