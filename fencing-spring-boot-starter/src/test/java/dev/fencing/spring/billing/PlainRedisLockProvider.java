package dev.fencing.spring.billing;

import java.util.Optional;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * The control's lock provider: a plain Redis lock that ends after {@code lockAtMostFor}, as a
 * ShedLock user's Redis provider does, with no fencing.
 */
public final class PlainRedisLockProvider implements LockProvider {

  private final RedissonClient redisson;
  private final String keyPrefix;

  public PlainRedisLockProvider(RedissonClient redisson, String keyPrefix) {
    this.redisson = redisson;
    this.keyPrefix = keyPrefix;
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration config) {
    RLock lock = redisson.getLock(keyPrefix + config.getName());
    try {
      if (!lock.tryLock(0, config.getLockAtMostFor().toMillis(), TimeUnit.MILLISECONDS)) {
        return Optional.empty();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
    return Optional.of(
        () -> {
          if (lock.isHeldByCurrentThread()) {
            lock.unlock();
          }
        });
  }
}
