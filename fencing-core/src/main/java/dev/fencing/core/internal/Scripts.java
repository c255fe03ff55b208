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
   * The hand-off, a Lua function the release and abandon scripts share: pops the queue of waiters
   * (a sorted set, first come first) until an entry that is still live (its waiter refreshed it
   * within its stay), and gives the lock to that lease id with a fresh token from the counter, for
   * the lease time the waiter asked for; announces {@code handoff:<lease id>:<token>} on the
   * channel unless the waiter queued through the releasing store (which tells it directly). Returns
   * {@code "<lease id>:<token>"}, or nil when nobody live was waiting.
   */
  private static final String HAND_OFF =
      """
      local function handOff(lock, counter, queue, waiting, channel, releaser)
        local nowMs = nil
        while true do
          local head = redis.call('zpopmin', queue)
          local id = head[1]
          if not id then
            return nil
          end
          if not nowMs then
            local now = redis.call('time')
            nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
          end
          local entry = redis.call('hget', waiting, id)
          redis.call('hdel', waiting, id)
          if entry then
            local leaseMs, expiresAt, store = string.match(entry, '^(%d+):(%d+):(.*)$')
            if leaseMs and tonumber(expiresAt) > nowMs then
              local token = redis.call('incr', counter)
              redis.call('set', lock, id .. ':' .. token, 'px', leaseMs)
              if store ~= releaser then
                redis.call('publish', channel, 'handoff:' .. id .. ':' .. token)
              end
              return id .. ':' .. token
            end
          end
        end
      end
      """;

  /**
   * KEYS: lock, counter, abandoned marker of this lease id, queue, waiting. ARGV: lease id, ttl ms,
   * stay ms, store id. For a waiter: returns the token when it holds the lock (handed to it
   * earlier: the lock is extended by its ttl; or free: taken as {@link #ACQUIRE} does), leaving the
   * queue; otherwise joins the queue (keeping its place) for the lock's remaining time plus the
   * stay, and returns {@code -(remaining ttl ms) - 1}. Returns -1 for an abandoned lease id.
   */
  static final Script ACQUIRE_OR_QUEUE =
      new Script(
          """
          if redis.call('exists', KEYS[3]) == 1 then
            return -1
          end
          local owner = ARGV[1] .. ':'
          local value = redis.call('get', KEYS[1])
          if value and string.sub(value, 1, string.len(owner)) == owner then
            redis.call('pexpire', KEYS[1], ARGV[2])
            redis.call('zrem', KEYS[4], ARGV[1])
            redis.call('hdel', KEYS[5], ARGV[1])
            return tonumber(string.sub(value, string.len(owner) + 1))
          end
          if not value then
            local token = redis.call('incr', KEYS[2])
            redis.call('set', KEYS[1], owner .. token, 'px', ARGV[2])
            redis.call('zrem', KEYS[4], ARGV[1])
            redis.call('hdel', KEYS[5], ARGV[1])
            return token
          end
          local ttl = redis.call('pttl', KEYS[1])
          if ttl < 0 then ttl = 0 end
          local now = redis.call('time')
          local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
          local stay = ttl + tonumber(ARGV[3])
          if not redis.call('zscore', KEYS[4], ARGV[1]) then
            local last = redis.call('zrange', KEYS[4], -1, -1, 'withscores')
            local score = 1
            if last[2] then score = tonumber(last[2]) + 1 end
            redis.call('zadd', KEYS[4], score, ARGV[1])
          end
          redis.call('hset', KEYS[5], ARGV[1], ARGV[2] .. ':' .. (nowMs + stay) .. ':' .. ARGV[4])
          if redis.call('pttl', KEYS[4]) < stay then redis.call('pexpire', KEYS[4], stay) end
          if redis.call('pttl', KEYS[5]) < stay then redis.call('pexpire', KEYS[5], stay) end
          return -ttl - 1
          """);

  /**
   * KEYS: lock, abandoned marker of the lease id, channel, queue, waiting, counter. ARGV: lease id,
   * ttl ms, store id. For an acquisition whose answer never came, or a waiter that gave up: marks
   * its lease id abandoned for one lease time (so the acquire scripts, if they have not run yet,
   * will not take the lock), takes it out of the queue, and if the lock was taken with (or handed
   * to) it, deletes the lock and hands it on. Returns {@code "0"} (no lock of it), {@code "1"}
   * (deleted) or {@code "1:<lease id>:<token>"} (deleted and handed on).
   */
  static final Script ABANDON =
      new Script(
          HAND_OFF
              + """
              redis.call('set', KEYS[2], '1', 'px', ARGV[2])
              redis.call('zrem', KEYS[4], ARGV[1])
              redis.call('hdel', KEYS[5], ARGV[1])
              local value = redis.call('get', KEYS[1])
              local owner = ARGV[1] .. ':'
              if value and string.sub(value, 1, string.len(owner)) == owner then
                redis.call('del', KEYS[1])
                local handed = handOff(KEYS[1], KEYS[6], KEYS[4], KEYS[5], KEYS[3], ARGV[3])
                if handed then
                  return '1:' .. handed
                end
                redis.call('publish', KEYS[3], value)
                return '1'
              end
              return '0'
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
   * KEYS: lock, channel, queue, waiting, counter. ARGV: value, keep ms, store id. If the lock holds
   * the value: with keep 0, deletes it and hands it to the first live waiter, or announces it free;
   * otherwise lets it expire in keep ms. Returns {@code "0"} when the lock did not hold the value,
   * {@code "1"} when it did, {@code "1:<lease id>:<token>"} when it was handed over.
   */
  static final Script RELEASE =
      new Script(
          HAND_OFF
              + """
              if redis.call('get', KEYS[1]) ~= ARGV[1] then
                return '0'
              end
              if tonumber(ARGV[2]) > 0 then
                redis.call('pexpire', KEYS[1], ARGV[2])
                return '1'
              end
              redis.call('del', KEYS[1])
              local handed = handOff(KEYS[1], KEYS[5], KEYS[3], KEYS[4], KEYS[2], ARGV[3])
              if handed then
                return '1:' .. handed
              end
              redis.call('publish', KEYS[2], ARGV[1])
              return '1'
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
