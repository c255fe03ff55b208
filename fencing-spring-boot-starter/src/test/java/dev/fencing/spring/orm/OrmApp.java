package dev.fencing.spring.orm;

import dev.fencing.core.testing.RedisServers;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A service as teams write it: Boot's DataSource, Flyway, Spring Data JPA on Hibernate, Spring Data
 * JDBC, JdbcTemplate and ShedLock, all auto-configured, on one fenced DataSource.
 */
@SpringBootApplication
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
public class OrmApp {

  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson() {
    return RedisServers.connectShared();
  }
}
