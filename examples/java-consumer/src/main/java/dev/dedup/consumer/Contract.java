package dev.dedup.consumer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;

/**
 * The names and value forms of docs/CONTRACT.md, written once for this consumer: the key, the
 * values a key holds, the payload fingerprint, the DLQ headers and the label values. Each one is
 * the same string as in the TypeScript library's names/dedup.ts and server/dedup.
 */
final class Contract {
  private Contract() {}

  /** The contract version this consumer follows (the {@code contract} label of {@code dedup_handler_info}). */
  static final String VERSION = "1";

  /** Kafka header carrying the message UUID (Watermill's Kafka marshaler). */
  static final String UUID_HEADER = "_watermill_message_uuid";

  static final String PROCESSING_PREFIX = "processing:";
  static final String CLAIMED_PREFIX = "claimed:";
  static final String DONE = "done";
  static final String DONE_POSITION_PREFIX = "done:";
  static final String FINGERPRINT_SEPARATOR = "#";
  static final String NAIVE = "1";
  static final int FINGERPRINT_LENGTH = 7;

  /** PoisonQueue headers: Watermill's four and the bounded class. */
  static final String REASON_POISONED = "reason_poisoned";
  static final String TOPIC_POISONED = "topic_poisoned";
  static final String HANDLER_POISONED = "handler_poisoned";
  static final String SUBSCRIBER_POISONED = "subscriber_poisoned";
  static final String REASON_CLASS_POISONED = "reason_class_poisoned";

  /** Its lease is not renewed while the handler runs: the {@code heartbeat} label ({@code timeout_ms} bounds an attempt instead). */
  static final String HEARTBEAT = "off";

  /**
   * Its side effect, the {@code side_effects} label: an append to a Redis list outside the dedup
   * check ({@code external}: neither a PostgreSQL write nor a produced Kafka message).
   */
  static final String SIDE_EFFECTS = "external";

  /** The spec's stack, outermost first, as this consumer runs it. */
  static final String STACK = "correlationId,recoverer,poisonQueue,retry,deduplicator";

  static final List<String> PROCESSED_RESULTS = List.of("success", "error", "deduplicated");
  static final List<String> ERROR_REASONS = List.of("redis_timeout", "redis_conn", "marshal");
  static final List<String> POISON_CLASSES =
      List.of("redis_timeout", "redis_conn", "marshal", "non_retryable", "in_progress", "payload_conflict", "handler_error");
  static final List<String> CAUSES = List.of("redelivery", "republish", "unknown");
  /** The {@code difference} label of {@code deduplication_payload_conflicts_total}: this consumer compares bytes only. */
  static final List<String> DIFFERENCES = List.of("fields", "bytes");

  /** {@code <service>:dedup:<handler>}. */
  static String prefix(String service, String handler) {
    return service + ":dedup:" + handler;
  }

  /** The DLQ topic of {@code topic}. */
  static String dlqTopic(String topic) {
    return topic + ".dlq";
  }

  /**
   * The payload fingerprint: the first 7 characters of the base64url (unpadded) SHA-256 of the
   * payload bytes, as {@code payloadFingerprint} in server/dedup/duplicate-cause.ts.
   */
  static String fingerprint(byte[] payload) {
    try {
      byte[] sha = MessageDigest.getInstance("SHA-256").digest(payload == null ? new byte[0] : payload);
      return Base64.getUrlEncoder().withoutPadding().encodeToString(sha).substring(0, FINGERPRINT_LENGTH);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JVM", e);
    }
  }

  /** {@code done:<topic>:<partition>:<offset>#<fingerprint>}. */
  static String doneValue(String topic, int partition, long offset, String fingerprint) {
    return DONE_POSITION_PREFIX + topic + ":" + partition + ":" + offset + FINGERPRINT_SEPARATOR + fingerprint;
  }

  /** True for every {@code done} form (plain, with a position, with a fingerprint). */
  static boolean isDone(String v) {
    return v.equals(DONE) || v.startsWith(DONE_POSITION_PREFIX) || v.startsWith(DONE + FINGERPRINT_SEPARATOR);
  }

  /** The fingerprint a {@code done} value carries, or null. */
  static String storedFingerprint(String v) {
    int n = v.length() - FINGERPRINT_LENGTH - 1;
    if (n < DONE.length() || v.charAt(n) != '#' || !isDone(v)) return null;
    return v.substring(n + 1);
  }

  /** What a swallowed copy at {@code position} was, given the stored value. */
  static String cause(String stored, String position) {
    if (!stored.startsWith(DONE_POSITION_PREFIX)) return "unknown";
    String rest = stored.substring(DONE_POSITION_PREFIX.length());
    if (storedFingerprint(stored) != null) rest = rest.substring(0, rest.length() - FINGERPRINT_LENGTH - 1);
    return rest.equals(position) ? "redelivery" : "republish";
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
