/**
 * The Deduplicator's Prometheus metrics: spec §7's four names exactly, plus three of our own.
 *
 * ## When each counter moves (the one place this is defined)
 * Unit of counting for `messages_*`: **one delivery** = one message object handed to the stack by
 * the transport (a Kafka redelivery is a new delivery; Retry's attempts within one are not).
 * - `messages_processed_total{result="deduplicated"}` and `messages_deduplicated_total`: together,
 *   once, when the Deduplicator swallows the delivery (key `done`, or any existing key under the
 *   `release` / `naive` markings).
 * - `messages_processed_total{result="success"}`: once, when the handler succeeded in this delivery
 *   (including a fail-open pass-through).
 * - `messages_processed_total{result="error"}`: once, when a delivery that reached the Deduplicator
 *   ends (ack via the DLQ, or nack) without success and without being swallowed — counted when the
 *   Router settles it (`context.onSettled`). Called without a Router, it counts at the first failed
 *   attempt instead. A delivery that only met `InProgressError` counts here too.
 * So `deduplicated / processed` is the share of deliveries that were repeats — what the spec §8
 * alert assumes. Counting per attempt instead would add every retry to the denominator and hide
 * a duplicating publisher behind a flaky handler.
 *
 * Per store call (not per delivery):
 * - `deduplication_check_duration_seconds{service}`: one observation per claim round trip (a batch
 *   pre-claim is ONE observation for the whole pipeline), including calls that failed or timed out.
 * - `deduplication_errors_total{service,reason}`: each failed store call (claim, complete,
 *   release; a batch counts once), and each key-factory failure (`marshal`).
 * - `deduplication_in_progress_total{service,topic,handler}` (ours): each attempt that met a key
 *   held by another consumer's lease (→ `InProgressError`).
 * - `deduplication_released_total{service,topic,handler}` (ours): each key released after a failed
 *   attempt (the retry will run the handler again; spec §10).
 * - `deduplication_lease_lost_total{service,topic,handler}` (ours): each success whose lease had
 *   expired and been taken over by another consumer before completion — a possible double run
 *   that only the handler's own idempotency (spec §5) can absorb. Alert on any increase.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import type { DedupErrorReason } from "./errors";

/** Metric names, written once (spec §7 + ours). */
export const METRIC_NAMES = {
  deduplicated: "messages_deduplicated_total",
  processed: "messages_processed_total",
  checkDuration: "deduplication_check_duration_seconds",
  errors: "deduplication_errors_total",
  inProgress: "deduplication_in_progress_total",
  released: "deduplication_released_total",
  leaseLost: "deduplication_lease_lost_total",
} as const;

/** Buckets of `deduplication_check_duration_seconds`: include the spec's 0.005…0.1 and the 50 ms alert threshold. */
export const CHECK_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The result label of `messages_processed_total`. */
export type ProcessedResult = "success" | "error" | "deduplicated";

/** The metric objects of one Registry. */
export interface DedupMetrics {
  deduplicated: Counter<"service" | "topic" | "handler">;
  processed: Counter<"service" | "topic" | "handler" | "result">;
  checkDuration: Histogram<"service">;
  errors: Counter<"service" | "reason">;
  inProgress: Counter<"service" | "topic" | "handler">;
  released: Counter<"service" | "topic" | "handler">;
  leaseLost: Counter<"service" | "topic" | "handler">;
}

function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

const cache = new WeakMap<Registry, DedupMetrics>();

/**
 * The Deduplicator's metrics on `registry`, created on first use and reused after (get-or-create:
 * a module evaluated twice under Next.js does not throw "already registered"). Never touches
 * prom-client's global registry.
 */
export function dedupMetrics(registry: Registry): DedupMetrics {
  const hit = cache.get(registry);
  if (hit) return hit;
  const registers = [registry];
  const m: DedupMetrics = {
    deduplicated: getOrCreate(registry, METRIC_NAMES.deduplicated, () => new Counter({ name: METRIC_NAMES.deduplicated, help: "Deliveries swallowed by the Deduplicator as repeats (once per delivery).", labelNames: ["service", "topic", "handler"], registers })),
    processed: getOrCreate(registry, METRIC_NAMES.processed, () => new Counter({ name: METRIC_NAMES.processed, help: "Deliveries that reached the Deduplicator, by final result (once per delivery, not per retry attempt).", labelNames: ["service", "topic", "handler", "result"], registers })),
    checkDuration: getOrCreate(registry, METRIC_NAMES.checkDuration, () => new Histogram({ name: METRIC_NAMES.checkDuration, help: "Duration of one dedup claim round trip to the store (a batch pre-claim is one observation).", labelNames: ["service"], buckets: CHECK_DURATION_BUCKETS, registers })),
    errors: getOrCreate(registry, METRIC_NAMES.errors, () => new Counter({ name: METRIC_NAMES.errors, help: "Failed dedup store calls and key-factory failures, by reason (redis_timeout, redis_conn, marshal).", labelNames: ["service", "reason"], registers })),
    inProgress: getOrCreate(registry, METRIC_NAMES.inProgress, () => new Counter({ name: METRIC_NAMES.inProgress, help: "Attempts that met a key leased by another consumer (InProgressError, retried).", labelNames: ["service", "topic", "handler"], registers })),
    released: getOrCreate(registry, METRIC_NAMES.released, () => new Counter({ name: METRIC_NAMES.released, help: "Dedup keys released after a failed attempt so that the retry runs the handler again.", labelNames: ["service", "topic", "handler"], registers })),
    leaseLost: getOrCreate(registry, METRIC_NAMES.leaseLost, () => new Counter({ name: METRIC_NAMES.leaseLost, help: "Successful runs whose lease had been taken over by another consumer (possible double run).", labelNames: ["service", "topic", "handler"], registers })),
  };
  cache.set(registry, m);
  return m;
}

/** What the Deduplicator records; a no-op implementation when no Registry is given. */
export interface DedupRecorder {
  result(topic: string, handler: string, result: ProcessedResult): void;
  checkSeconds(seconds: number): void;
  error(reason: DedupErrorReason): void;
  inProgress(topic: string, handler: string): void;
  released(topic: string, handler: string): void;
  leaseLost(topic: string, handler: string): void;
}

/** A recorder bound to one service label, with label children cached (hot path: no label hashing). */
export function dedupRecorder(registry: Registry | undefined, service: string): DedupRecorder {
  if (!registry) {
    const noop = () => undefined;
    return { result: noop, checkSeconds: noop, error: noop, inProgress: noop, released: noop, leaseLost: noop };
  }
  const m = dedupMetrics(registry);
  const children = new Map<string, { inc(): void }>();
  const child = (kind: string, make: () => { inc(): void }, topic: string, handler: string) => {
    const k = `${kind}\u0000${topic}\u0000${handler}`;
    let c = children.get(k);
    if (!c) {
      c = make();
      children.set(k, c);
    }
    return c;
  };
  const duration = m.checkDuration.labels({ service });
  return {
    result(topic, handler, result) {
      child(`p:${result}`, () => m.processed.labels({ service, topic, handler, result }), topic, handler).inc();
      if (result === "deduplicated") child("d", () => m.deduplicated.labels({ service, topic, handler }), topic, handler).inc();
    },
    checkSeconds: (s) => duration.observe(s),
    error: (reason) => m.errors.labels({ service, reason }).inc(),
    inProgress: (topic, handler) => child("ip", () => m.inProgress.labels({ service, topic, handler }), topic, handler).inc(),
    released: (topic, handler) => child("rel", () => m.released.labels({ service, topic, handler }), topic, handler).inc(),
    leaseLost: (topic, handler) => child("ll", () => m.leaseLost.labels({ service, topic, handler }), topic, handler).inc(),
  };
}
