package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.Lease;
import dev.fencing.core.LeaseManager;
import dev.fencing.core.LeaseObserver;
import dev.fencing.core.LeaseRequest;
import dev.fencing.core.testing.RedisServers;
import dev.fencing.jdbc.FenceObserver;
import dev.fencing.micrometer.FencingMetrics;
import dev.fencing.shedlock.FencedLockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The meters and the ShedLock provider: configured when their modules (and a meter registry) are
 * there, absent otherwise, and the application's own beans win.
 */
class OptionalAutoConfigurationTest {

  private final String schema = "spring_optional_" + UUID.randomUUID().toString().substring(0, 8);
  private final String fenceSchema = schema + "_fence";

  private ApplicationContextRunner runner;

  @BeforeEach
  void runner() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
    runner =
        new ApplicationContextRunner()
            .withConfiguration(
                AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    FencingAutoConfiguration.class,
                    FencingMetricsAutoConfiguration.class,
                    FencingShedLockAutoConfiguration.class))
            .withPropertyValues(
                "spring.datasource.url=" + TestDatabase.URL,
                "spring.datasource.hikari.maximum-pool-size=2",
                "fencing.schema=" + fenceSchema,
                "fencing.key-prefix=fencing-spring-test:" + schema + ":")
            .withBean(
                RedissonClient.class,
                RedisServers::connectShared,
                definition -> definition.setDestroyMethodName("shutdown"));
  }

  @AfterEach
  void dropSchemas() throws SQLException {
    TestDatabase.dropSchemas(schema, fenceSchema);
  }

  private ApplicationContextRunner withRegistry() {
    return runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new);
  }

  /** Acquires and releases one lease through the context's lease manager. */
  private static void acquireOnce(AssertableApplicationContext context, String resource) {
    acquireOnce(context, resource, context.getBean(MeterRegistry.class));
  }

  private static void acquireOnce(
      AssertableApplicationContext context, String resource, MeterRegistry registry) {
    try (Lease lease =
        context
            .getBean(LeaseManager.class)
            .acquire(resource, LeaseRequest.forLeaseTime(Duration.ofSeconds(5)))) {
      assertThat(registry.get(FencingMetrics.ACTIVE).tags().gauges())
          .singleElement()
          .satisfies(gauge -> assertThat(gauge.value()).isEqualTo(1));
      assertThat(lease.isHeld()).isTrue();
    }
  }

  @Test
  void metersArePublishedInTheApplicationsRegistryWithoutResourceTags() {
    withRegistry()
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(FencingMetrics.class);
              acquireOnce(context, "metered");
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              assertThat(
                      registry
                          .get(FencingMetrics.REGISTRATIONS)
                          .tag("outcome", "registered")
                          .counter()
                          .count())
                  .isEqualTo(1);
              assertThat(registry.get(FencingMetrics.ACTIVE).gauge().value()).isZero();
              assertThat(registry.get(FencingMetrics.REJECTED).counter().count()).isZero();
              assertThat(registry.getMeters())
                  .allSatisfy(m -> assertThat(m.getId().getTag("resource")).isNull());
            });
  }

  @Test
  void metersArePublishedInTheRegistryOfSpringBootActuator() {
    runner
        .withConfiguration(
            AutoConfigurations.of(
                MetricsAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(FencingMetrics.class);
              acquireOnce(context, "actuator");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get(FencingMetrics.REGISTRATIONS)
                          .tag("outcome", "registered")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }

  @Test
  void resourceTagsOnlyWhenEnabled() {
    withRegistry()
        .withPropertyValues("fencing.metrics.tag-resource=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              acquireOnce(context, "tagged");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get(FencingMetrics.REGISTRATIONS)
                          .tag("resource", "tagged")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }

  @Test
  void theApplicationsOwnObserversAreToldToo() {
    List<String> events = new CopyOnWriteArrayList<>();
    withRegistry()
        .withBean(
            "ownLeaseObserver",
            LeaseObserver.class,
            () ->
                new LeaseObserver() {
                  @Override
                  public void onAcquired(Lease lease) {
                    events.add("acquired " + lease.resource());
                  }
                })
        .withBean(
            "ownFenceObserver",
            FenceObserver.class,
            () ->
                new FenceObserver() {
                  @Override
                  public void onRegistered(Lease lease) {
                    events.add("registered " + lease.resource());
                  }
                })
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              acquireOnce(context, "observed");
              assertThat(events).containsExactly("acquired observed", "registered observed");
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .get(FencingMetrics.REGISTRATIONS)
                          .tag("outcome", "registered")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }

  @Test
  void noMetersWithoutARegistry() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed().hasSingleBean(LeaseManager.class);
          assertThat(context).doesNotHaveBean(FencingMetrics.class);
        });
  }

  @Test
  void noMetersWithoutFencingMicrometer() {
    withRegistry()
        .withClassLoader(new FilteredClassLoader(FencingMetrics.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseManager.class);
              assertThat(context).doesNotHaveBean("fencingMetrics");
              assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
            });
  }

  @Test
  void noMetersWithoutMicrometer() {
    runner
        .withClassLoader(new FilteredClassLoader("io.micrometer."))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseManager.class);
              assertThat(context).doesNotHaveBean("fencingMetrics");
            });
  }

  @Test
  void noMetersWhenDisabled() {
    withRegistry()
        .withPropertyValues("fencing.metrics.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(FencingMetrics.class);
              assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
            });
  }

  @Test
  void usersFencingMetricsWins() {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    withRegistry()
        .withBean("ownMetrics", FencingMetrics.class, () -> new FencingMetrics(own, true))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(FencingMetrics.class);
              assertThat(context).hasBean("ownMetrics");
              acquireOnce(context, "own", own);
              assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
              assertThat(
                      own.get(FencingMetrics.REGISTRATIONS)
                          .tag("resource", "own")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }

  @Test
  void theShedLockProviderIsFencedAndMetered() {
    withRegistry()
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LockProvider.class);
              LockProvider provider = context.getBean(LockProvider.class);
              assertThat(provider).isInstanceOf(FencedLockProvider.class);
              LockConfiguration config =
                  new LockConfiguration(
                      ClockProvider.now(), "nightly", Duration.ofSeconds(5), Duration.ZERO);
              Optional<SimpleLock> lock = provider.lock(config);
              assertThat(lock).isPresent();
              assertThat(provider.lock(config)).as("locked once").isEmpty();
              lock.get().unlock();
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              assertThat(
                      registry
                          .get(FencingMetrics.ACQUISITIONS)
                          .tag("outcome", "acquired")
                          .timer()
                          .count())
                  .isEqualTo(1);
              assertThat(
                      registry
                          .get(FencingMetrics.ACQUISITIONS)
                          .tag("outcome", "unavailable")
                          .timer()
                          .count())
                  .isEqualTo(1);
              assertThat(
                      registry
                          .get(FencingMetrics.REGISTRATIONS)
                          .tag("outcome", "registered")
                          .counter()
                          .count())
                  .isEqualTo(1);
            });
  }

  @Test
  void noShedLockProviderWithoutShedLock() {
    runner
        .withClassLoader(new FilteredClassLoader("net.javacrumbs.shedlock."))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseManager.class);
              assertThat(context).doesNotHaveBean("fencedLockProvider");
            });
  }

  @Test
  void noShedLockProviderWithoutFencingShedLock() {
    runner
        .withClassLoader(new FilteredClassLoader(FencedLockProvider.class))
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LeaseManager.class);
              assertThat(context).doesNotHaveBean(LockProvider.class);
            });
  }

  @Test
  void usersLockProviderWins() {
    LockProvider own = config -> Optional.empty();
    runner
        .withBean("ownLockProvider", LockProvider.class, () -> own)
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LockProvider.class);
              assertThat(context.getBean(LockProvider.class)).isSameAs(own);
            });
  }

  @Test
  void noShedLockProviderWhenDisabledOrWithoutFencing() {
    runner
        .withPropertyValues("fencing.shedlock.enabled=false")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockProvider.class));
    runner
        .withPropertyValues("fencing.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).doesNotHaveBean(LockProvider.class);
              assertThat(context).doesNotHaveBean(LeaseManager.class);
            });
  }
}
