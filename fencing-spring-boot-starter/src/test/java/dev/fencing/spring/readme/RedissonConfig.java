package dev.fencing.spring.readme;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The RedissonClient recipe of docs/spring-boot.md; the block between the markers is there
 * verbatim.
 */
@Configuration(proxyBeanMethods = false)
public class RedissonConfig {

  // README:
  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson(
      @Value("${spring.data.redis.host:localhost}") String host,
      @Value("${spring.data.redis.port:6379}") int port) {
    Config config = new Config();
    config.useSingleServer().setAddress("redis://" + host + ":" + port);
    return Redisson.create(config);
  }
  // README:
}
