package dev.dedup.consumer;

import java.net.SocketTimeoutException;
import java.net.URI;
import java.util.List;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.SetParams;

/**
 * The contract's three writes on Redis (Jedis): the claim {@code SET key processing:<token> NX PX
 * lease} (with GET: the value already there, in the same round trip), the {@code done} mark with
 * the position and fingerprint for the TTL, and the release after a failure — a compare-and-delete
 * that deletes the key only while it still holds our token. Each call is bounded by TIMEOUT_MS.
 */
final class DedupStore implements AutoCloseable {
  /** As COMPARE_AND_DELETE_LUA in server/dedup/redis-scripts.ts. */
  static final String COMPARE_AND_DELETE =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

  private final JedisPooled jedis;

  DedupStore(String url, int timeoutMs) {
    URI u = URI.create(url);
    DefaultJedisClientConfig.Builder cfg = DefaultJedisClientConfig.builder().socketTimeoutMillis(timeoutMs).connectionTimeoutMillis(Math.max(timeoutMs, 2_000));
    if (u.getUserInfo() != null) {
      String[] parts = u.getUserInfo().split(":", 2);
      if (parts.length == 2) {
        if (!parts[0].isEmpty()) cfg.user(parts[0]);
        cfg.password(parts[1]);
      } else cfg.password(parts[0]);
    }
    String path = u.getPath();
    if (path != null && path.length() > 1) cfg.database(Integer.parseInt(path.substring(1)));
    jedis = new JedisPooled(new HostAndPort(u.getHost(), u.getPort() < 0 ? 6379 : u.getPort()), cfg.build());
  }

  /** Claims {@code key} for {@code leaseMs}: null when claimed, else the value already there (not overwritten). */
  String claim(String key, String value, long leaseMs) {
    return jedis.setGet(key, value, SetParams.setParams().nx().px(leaseMs));
  }

  /** Marks {@code key} done for {@code ttlMs}; returns the value it replaced (our lease, or someone else's). */
  String markDone(String key, String done, long ttlMs) {
    return jedis.setGet(key, done, SetParams.setParams().px(ttlMs));
  }

  /** Deletes {@code key} if it still holds {@code value}; true when it did. */
  boolean release(String key, String value) {
    Object n = jedis.eval(COMPARE_AND_DELETE, List.of(key), List.of(value));
    return n instanceof Long l && l > 0;
  }

  /** The handler's observable side effect: one entry per processed UUID on {@code list}. */
  void effect(String list, String uuid) {
    jedis.rpush(list, uuid);
  }

  /** {@code redis_timeout} for a call slower than the socket timeout, else {@code redis_conn}. */
  static String reasonOf(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SocketTimeoutException) return "redis_timeout";
    }
    return "redis_conn";
  }

  @Override
  public void close() {
    jedis.close();
  }
}
