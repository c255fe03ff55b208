package dev.fencing.spring.billing;

import dev.fencing.core.testing.RedisServers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The billing service of the proof: a DataSource and Flyway from Boot, Redisson, a meter registry,
 * the job with {@code @Fenced} and the same job with ShedLock's {@code @SchedulerLock}.
 */
@SpringBootApplication
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
public class BillingApp {

  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson() {
    return RedisServers.connectShared();
  }

  @Bean
  MeterRegistry meterRegistry() {
    return new SimpleMeterRegistry();
  }
}
