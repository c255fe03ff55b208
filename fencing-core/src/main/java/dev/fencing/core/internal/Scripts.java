package dev.fencing.core.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The Lua scripts of a lease, each one atomic and one round trip. */
final class Scripts {

  /**
   * KEYS: lock, counter, abandoned marker of this lease id. ARGV: lease id, ttl ms. Returns the new
   * token (positive) when acquired; otherwise {@code -(remaining ttl ms) - 1}. Does nothing if the
   * caller already gave up on this acquisition (the marker exists).
   */
  static final Script ACQUIRE =
      new Script(
          """
          if redis.call('exists', KEYS[3]) == 1 then
            return -1
          end
          if redis.call('exists', KEYS[1]) == 0 then
            local token = redis.call('incr', KEYS[2])
            redis.call('set', KEYS[1], ARGV[1] .. ':' .. token, 'px', ARGV[2])
            return token
          end
          local ttl = redis.call('pttl', KEYS[1])
          if ttl < 0 then ttl = 0 end
          return -ttl - 1
          """);

  /**
   * KEYS: lock, abandoned marker of the lease id, channel. ARGV: lease id, ttl ms. For an
   * acquisition whose answer never came: marks its lease id abandoned for one lease time (so the
   * script, if it has not run yet, will not take the lock) and deletes the lock if that acquisition
   * took it. Returns 1 when a lock was deleted, 0 otherwise.
   */
  static final Script ABANDON =
      new Script(
          """
          redis.call('set', KEYS[2], '1', 'px', ARGV[2])
          local value = redis.call('get', KEYS[1])
          local owner = ARGV[1] .. ':'
          if value and string.sub(value, 1, string.len(owner)) == owner then
            redis.call('del', KEYS[1])
            redis.call('publish', KEYS[3], value)
            return 1
          end
          return 0
          """);

  /**
   * KEYS: locks (one hash slot). ARGV: value then ttl ms, per lock. Extends each lock that still
   * holds its value by its ttl; returns 1 (extended) or 0 (gone) per lock, in order.
   */
  static final Script RENEW_MANY =
      new Script(
          """
          local renewed = {}
          for i = 1, #KEYS do
            if redis.call('get', KEYS[i]) == ARGV[2 * i - 1] then
              redis.call('pexpire', KEYS[i], ARGV[2 * i])
              renewed[i] = 1
            else
              renewed[i] = 0
            end
          end
          return renewed
          """);

  /**
   * KEYS: lock, channel. ARGV: value, keep ms. If the lock holds the value: with keep 0, deletes it
   * and wakes waiters; otherwise lets it expire in keep ms. Returns 1 when it held the value, 0
   * otherwise.
   */
  static final Script RELEASE =
      new Script(
          """
          if redis.call('get', KEYS[1]) == ARGV[1] then
            if tonumber(ARGV[2]) > 0 then
              redis.call('pexpire', KEYS[1], ARGV[2])
            else
              redis.call('del', KEYS[1])
              redis.call('publish', KEYS[2], ARGV[1])
            end
            return 1
          end
          return 0
          """);

  /** KEYS: counter. ARGV: floor. Raises the counter to at least the floor; returns the counter. */
  static final Script ADVANCE_FLOOR =
      new Script(
          """
          local current = tonumber(redis.call('get', KEYS[1]) or '0')
          local floor = tonumber(ARGV[1])
          if current < floor then
            redis.call('set', KEYS[1], ARGV[1])
            return floor
          end
          return current
          """);

  private Scripts() {}

  /** A script with its SHA-1, for EVALSHA. */
  record Script(String source, String sha) {
    Script(String source) {
      this(source, sha1(source));
    }

    private static String sha1(String source) {
      try {
        MessageDigest digest = MessageDigest.getInstance("SHA-1");
        return HexFormat.of().formatHex(digest.digest(source.getBytes(StandardCharsets.UTF_8)));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-1 is required by every Java platform", e);
      }
    }
  }
}
