package dev.dedup.consumer;

import java.util.Map;

/**
 * The consumer's configuration, read from environment variables once at start-up. Every value has
 * the library's default (server/dedup/deduplicator-options.ts) unless the contract needs it named.
 */
record Config(
    String brokers,
    String redisUrl,
    String topic,
    String service,
    String handler,
    String group,
    int metricsPort,
    long ttlMs,
    String ttlClass,
    long leaseMs,
    int timeoutMs,
    String failureMode,
    int maxAttempts,
    String subscriber) {

  /** Reads the configuration from {@code env}; a missing required variable or a bad number names the fix. */
  static Config fromEnv(Map<String, String> env) {
    String service = env.getOrDefault("SERVICE", "java-consumer");
    String handler = env.getOrDefault("HANDLER", "on-event");
    String failureMode = env.getOrDefault("FAILURE_MODE", "open");
    if (!failureMode.equals("open") && !failureMode.equals("closed")) {
      throw new IllegalArgumentException("FAILURE_MODE must be \"open\" or \"closed\", got \"" + failureMode + "\"");
    }
    long ttlMs = number(env, "TTL_MS", 86_400_000L, 1, 365L * 86_400_000L);
    return new Config(
        env.getOrDefault("KAFKA_BROKERS", "127.0.0.1:9092"),
        env.getOrDefault("REDIS_URL", "redis://127.0.0.1:6379"),
        required(env, "TOPIC"),
        service,
        handler,
        env.getOrDefault("GROUP", service + "." + handler),
        (int) number(env, "METRICS_PORT", 9464, 0, 65_535),
        ttlMs,
        env.getOrDefault("TTL_CLASS", "default"),
        number(env, "LEASE_MS", 60_000, 1, ttlMs),
        (int) number(env, "TIMEOUT_MS", 500, 1, 60_000),
        failureMode,
        (int) number(env, "MAX_ATTEMPTS", 3, 1, 100),
        env.getOrDefault("SUBSCRIBER", "java-consumer-" + ProcessHandle.current().pid()));
  }

  private static String required(Map<String, String> env, String name) {
    String v = env.get(name);
    if (v == null || v.isBlank()) throw new IllegalArgumentException(name + " is not set: name the topic to consume, e.g. " + name + "=orders");
    return v;
  }

  private static long number(Map<String, String> env, String name, long fallback, long lo, long hi) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) return fallback;
    long v;
    try {
      v = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer in [" + lo + ", " + hi + "], got \"" + raw + "\"");
    }
    if (v < lo || v > hi) throw new IllegalArgumentException(name + " must be an integer in [" + lo + ", " + hi + "], got " + v);
    return v;
  }

  /** The handler's key prefix {@code <service>:dedup:<handler>}. */
  String prefix() {
    return Contract.prefix(service, handler);
  }
}
