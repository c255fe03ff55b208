package dev.fencing.spring.billing;

import dev.fencing.core.testing.RedisServers;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.redisson.api.RedissonClient;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The billing service of the proof: a DataSource, Flyway and (with Actuator) a meter registry from
 * Boot, Redisson, the job with {@code @Fenced} and the same job with ShedLock's
 * {@code @SchedulerLock}.
 */
@SpringBootApplication(
    excludeName = {
      // JPA and Spring Data JDBC are on the tests' class path for OrmApp; this service uses
      // JdbcTemplate and Boot's JDBC transaction manager only.
      "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.jpa.JpaRepositoriesAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.jdbc.JdbcRepositoriesAutoConfiguration"
    })
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
public class BillingApp {

  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson() {
    return RedisServers.connectShared();
  }
}
