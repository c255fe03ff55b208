package dev.fencing.spring.billing;

import dev.fencing.core.testing.RedisServers;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The billing service of the proof: a DataSource and Flyway from Boot, Redisson, one job. */
@SpringBootApplication
@EnableScheduling
public class BillingApp {

  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson() {
    return RedisServers.connectShared();
  }
}
