package dev.dedup.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import redis.clients.jedis.exceptions.JedisException;

/**
 * One record through the contract's stack: retry outside the dedup check (each attempt claims,
 * runs the handler, then marks done or releases), a poison queue outside the retry, and the
 * metrics of each step. {@link #process} answers whether the record may be committed.
 */
final class Processor {
  /** A failure that retrying cannot help (bad payload): straight to the DLQ. */
  static final class NonRetryable extends RuntimeException {
    NonRetryable(String message) {
      super(message);
    }
  }

  /** Interface of the DLQ publisher: true when the copy was written. */
  interface Dlq {
    boolean send(ConsumerRecord<byte[], byte[]> rec, String reason, String reasonClass);
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private final Config c;
  private final DedupStore store;
  private final Metrics m;
  private final Dlq dlq;
  private final String tokenPrefix = Contract.PROCESSING_PREFIX + "jvm-" + ProcessHandle.current().pid() + "-";
  private final AtomicLong seq = new AtomicLong();

  Processor(Config c, DedupStore store, Metrics m, Dlq dlq) {
    this.c = c;
    this.store = store;
    this.m = m;
    this.dlq = dlq;
  }

  /** Handles one record; false = not settled (redeliver it: the DLQ write failed, or another consumer still holds it). */
  boolean process(ConsumerRecord<byte[], byte[]> rec) {
    Header h = rec.headers().lastHeader(Contract.UUID_HEADER);
    String uuid = h == null ? "" : new String(h.value(), StandardCharsets.UTF_8).trim();
    if (uuid.isEmpty()) {
      m.error("marshal");
      return poison(rec, "marshal: no " + Contract.UUID_HEADER + " header", "marshal");
    }
    String key = c.prefix() + ":" + uuid;
    String fp = Contract.fingerprint(rec.value());
    String position = rec.topic() + ":" + rec.partition() + ":" + rec.offset();
    String reason = "handler failed";
    String reasonClass = "handler_error";
    for (int attempt = 1; attempt <= c.maxAttempts(); attempt++) {
      if (attempt > 1) pause(100L * (attempt - 1));
      String token = tokenPrefix + seq.incrementAndGet();
      String existing;
      boolean checked = true;
      long t0 = System.nanoTime(), startMs = System.currentTimeMillis();
      try {
        existing = store.claim(key, token, c.leaseMs());
        m.checked(t0, startMs);
      } catch (JedisException e) {
        String why = DedupStore.reasonOf(e);
        if (why.equals("redis_timeout")) m.checked(t0, startMs);
        m.error(why);
        if (c.failureMode().equals("closed")) {
          reason = "dedup store failed (" + why + "): " + e.getMessage();
          reasonClass = why;
          continue;
        }
        m.unchecked.labels(c.service(), c.handler(), why).inc();
        existing = null;
        checked = false;
      }
      if (existing != null) {
        if (existing.startsWith(Contract.PROCESSING_PREFIX)) {
          m.inProgress.labels(c.service(), c.topic(), c.handler()).inc();
          reason = "in progress: " + key + " is held by another consumer's lease";
          reasonClass = "in_progress";
          continue;
        }
        return duplicate(rec, key, existing, fp, position);
      }
      try {
        handle(rec, uuid);
      } catch (RuntimeException e) {
        if (checked) release(key, token);
        reason = e.getMessage();
        reasonClass = e instanceof NonRetryable ? "non_retryable" : "handler_error";
        if (e instanceof NonRetryable) break;
        continue;
      }
      if (checked) complete(key, token, Contract.doneValue(rec.topic(), rec.partition(), rec.offset(), fp));
      m.result("success");
      return true;
    }
    // A copy that only met another consumer's lease is redelivered, not poisoned (the library's notInProgress filter).
    if (reasonClass.equals("in_progress")) {
      m.result("error");
      return false;
    }
    boolean sent = poison(rec, reason, reasonClass);
    m.result("error");
    return sent;
  }

  /** A key that exists and is not a lease: a repeat, or a reused UUID with another payload. */
  private boolean duplicate(ConsumerRecord<byte[], byte[]> rec, String key, String stored, String fp, String position) {
    String storedFp = Contract.storedFingerprint(stored);
    if (storedFp != null && !storedFp.equals(fp)) {
      m.conflicts.labels(c.service(), c.handler(), "bytes").inc();
      String why = "payload conflict on " + key + ": the message UUID was processed with another payload (fingerprint " + storedFp + ", this copy " + fp
          + "); the publisher reuses UUIDs — fix it and re-publish this message with a new UUID";
      boolean sent = poison(rec, why, "payload_conflict");
      m.result("error");
      return sent;
    }
    m.deduplicated.labels(c.service(), c.topic(), c.handler()).inc();
    m.hot.offer(key.substring(key.lastIndexOf(':') + 1));
    m.byCause.labels(c.service(), c.topic(), c.handler(), Contract.cause(stored, position)).inc();
    m.result("deduplicated");
    return true;
  }

  /** The handler: a JSON payload, one effect per processed UUID; {@code "fail": true} fails every attempt. */
  private void handle(ConsumerRecord<byte[], byte[]> rec, String uuid) {
    long t0 = System.nanoTime();
    boolean ok = false;
    try {
      JsonNode body;
      try {
        body = JSON.readTree(rec.value() == null ? new byte[0] : rec.value());
      } catch (Exception e) {
        throw new NonRetryable("invalid JSON payload: " + e.getMessage().split("\n", 2)[0]);
      }
      if (body == null || body.isMissingNode()) throw new NonRetryable("invalid JSON payload: empty");
      if (body.path("fail").asBoolean(false)) throw new IllegalStateException("handler failed: the payload asks for it (\"fail\": true)");
      store.effect(c.service() + ":effects", uuid);
      ok = true;
    } finally {
      m.handlerTime.labels(c.service(), c.handler(), ok ? "true" : "false").observe((System.nanoTime() - t0) / 1e9);
    }
  }

  /** Marks the key done; a previous value that is neither our lease nor absent means another consumer took the lease over. */
  private void complete(String key, String token, String done) {
    for (int i = 0; i < 3; i++) {
      try {
        String previous = store.markDone(key, done, c.ttlMs());
        if (previous != null && !previous.equals(token) && !previous.equals(done)) m.leaseLost.labels(c.service(), c.topic(), c.handler()).inc();
        return;
      } catch (JedisException e) {
        m.error(DedupStore.reasonOf(e));
        pause(i == 0 ? 20 : 100);
      }
    }
    System.err.println("[java-consumer] could not mark " + key + " done; its lease expires after " + c.leaseMs() + " ms");
  }

  /** Deletes the key if it still holds our token, so the retry (or a redelivery) runs the handler. */
  private void release(String key, String token) {
    try {
      if (store.release(key, token)) m.released.labels(c.service(), c.topic(), c.handler()).inc();
    } catch (JedisException e) {
      m.error(DedupStore.reasonOf(e));
      System.err.println("[java-consumer] could not release " + key + ": it frees itself after " + c.leaseMs() + " ms");
    }
  }

  private boolean poison(ConsumerRecord<byte[], byte[]> rec, String reason, String reasonClass) {
    if (!dlq.send(rec, reason, reasonClass)) return false;
    m.poisoned.labels(c.service(), c.topic(), c.handler(), reasonClass).inc();
    return true;
  }

  private static void pause(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
