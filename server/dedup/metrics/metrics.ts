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
 *   pre-claim is ONE observation for the whole pipeline) that completed or timed out on a ready
 *   connection; a call that failed because the store was unreachable (`redis_conn`) is no sample.
 * - `deduplication_errors_total{service,reason}`: each failed store call (claim, complete,
 *   release; a batch counts once), and each key-factory failure (`marshal`).
 * - `deduplication_in_progress_total{service,topic,handler}` (ours): each attempt that met a key
 *   held by another consumer's lease (→ `InProgressError`).
 * - `deduplication_released_total{service,topic,handler}` (ours): each key released after a failed
 *   attempt (the retry will run the handler again; spec §10).
 * - `messages_poisoned_total{service,topic,handler,reason_poisoned}` (ours, counted by the
 *   PoisonQueue when given a registry): each message published to the DLQ; `reason_poisoned` is
 *   the error's class (see `poisonReasonClass`), never its free-text message, to bound cardinality.
 * - `deduplication_lease_lost_total{service,topic,handler}` (ours): each success whose lease had
 *   expired and been taken over by another consumer before completion — a possible double run
 *   that only the handler's own idempotency (spec §5) can absorb. Alert on any increase.
 * - `messages_duplicates_by_cause_total{service,topic,handler,cause}` (ours): with every
 *   `deduplicated` result, once, by what the swallowed copy was (see {@link DUPLICATE_CAUSE}): the
 *   `done` value holds the first delivery's `topic:partition:offset`, the copy's own position is
 *   compared with it. Sums to `messages_deduplicated_total`.
 * - `handler_execution_time_seconds{service,handler,success}` (Watermill's name, observed by
 *   `handlerTimer`, innermost in `defaultStack`): one observation per handler attempt, the handler
 *   alone; `success="false"` when it threw. Buckets reach past the default lease (60 s).
 * - `deduplication_payload_conflicts_total{service,handler,difference}` (ours): each copy whose
 *   UUID is `done` with another payload fingerprint (`lease` marking) — a publisher reusing UUIDs;
 *   `difference` is `fields` when the handler's chosen fields (its `fingerprint` option) differ,
 *   `bytes` when only the bytes were compared (no fields chosen, or a payload that is not JSON). Under
 *   `onPayloadConflict: "poison"` the copy is also an `error` result and a `payload_conflict` DLQ
 *   copy, under `"swallow"` a `deduplicated` one. Alert on any increase.
 * - `deduplication_fingerprint_fallbacks_total{service,handler}` (ours): each fingerprint of a
 *   handler with chosen fields (its `fingerprint` option) taken over the bytes, the payload not being
 *   UTF-8 JSON — each `done` mark and each compared copy; at 0 from registration for such handlers only.
 * - `deduplication_unchecked_total{service,handler,reason}` (ours): each handler run that fail-open
 *   let through WITHOUT a dedup check (the store call failed: `redis_timeout`, `redis_conn`; or the
 *   key factory threw: `marshal`), counted before the handler runs, once per attempt. Each is a
 *   message that would have run again had it been a repeat; fail-closed handlers never count here.
 *
 * Per handler, the moment (Unix seconds, gauges) of the last check, the last failure and the last
 * slow check — what tells "the fault is over" at the first scrape after its end (docs/UI.md):
 * - `deduplication_last_check_timestamp_seconds{service,handler}`: the latest claim round trip (a
 *   batch pre-claim is one): the start of a completed one (the store answered what was sent then),
 *   the end of a failed one;
 * - `deduplication_last_error_timestamp_seconds{service,handler}`: the last increment of
 *   `deduplication_errors_total` for the handler (a failed claim, `done` mark, release, renewal, or
 *   a key-factory failure);
 * - `deduplication_last_slow_check_timestamp_seconds{service,handler}`: the last check-duration
 *   sample above {@link SLOW_CHECK_SECONDS} (the latency alert's threshold).
 * The hot path stores a monotonic time in a plain cell; the gauges' `collect` turns it into wall
 * time at scrape. A series appears at its first event (absent = never in this process).
 *
 * ## Zero series (every label value exists at 0 before its first event)
 * `rate()` / `increase()` read a series born at N > 0 as 0: the first error, the first DLQ'd
 * message and the first duplicate would never reach an alert or a panel. So:
 * - `deduplication_errors_total{service, reason}` for every {@link DEDUP_ERROR_REASONS} value as soon
 *   as a recorder for the service exists (a `Deduplicator` is constructed);
 * - per handler, at its registration (`Router.addHandler`, via the middleware's `onRegister` hook;
 *   without a Router, at its first delivery): `processed` × every {@link PROCESSED_RESULTS},
 *   `deduplicated`, `in_progress`, `released`, `lease_lost`, `payload_conflicts` (service, handler),
 *   `unchecked` (service, handler) × every {@link DEDUP_ERROR_REASONS},
 *   and `duplicates_by_cause` × every
 *   {@link DUPLICATE_CAUSES}; the PoisonQueue adds `poisoned` × every `POISON_REASON_CLASSES`, and
 *   `handlerTimer` adds `handler_execution_time_seconds` × both `success` values.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { collectTimes, type CheckTimeGauges } from "./check-times";
import { flushPending } from "./counter-cells";
import {
  eventCounters,
  lastTimeGauges,
  resultCounters,
  type EventCounters,
  type ResultCounters,
} from "./dedup-counters";
import { HandlerTimeHistogram } from "./handler-time-histogram";
import { LocalHistogram } from "./local-histogram";
export { LocalHistogram };
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  METRIC_LABELS,
  METRIC_NAMES,
  PROCESSED_RESULTS,
  SLOW_CHECK_SECONDS,
} from "../../../names/dedup";
import { CHECK_DURATION_BUCKETS } from "../../../names/buckets";

/** `deduplication_check_duration_seconds` as the recorder uses it: a {@link LocalHistogram}, or a metric of that name already on the Registry. */
export interface CheckDurationHistogram {
  readonly name: string;
  observe(labels: { service: string }, seconds: number): void;
  get(): Promise<unknown>;
}

/** The metric objects of one Registry. */
export interface DedupMetrics extends CheckTimeGauges, ResultCounters, EventCounters {
  checkDuration: CheckDurationHistogram;
  /** `handler_execution_time_seconds{service,handler,success}`, observed by `handlerTimer` (../middleware/handler-timer). */
  handlerTime: HandlerTimeHistogram;
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
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    getOrCreate(
      registry,
      name,
      () => new Counter<L>({ name, help, labelNames: [...labelNames], registers, collect: flushPending }),
    );
  const gauge = (name: string, help: string) =>
    getOrCreate(
      registry,
      name,
      () =>
        new Gauge<"service" | "handler">({
          name,
          help,
          labelNames: [...METRIC_LABELS.lastCheck],
          registers,
          collect: collectTimes,
        }),
    );
  const m: DedupMetrics = {
    ...resultCounters(counter),
    checkDuration: getOrCreate(registry, METRIC_NAMES.checkDuration, () => {
      const h = new LocalHistogram<{ service: string }>(
        METRIC_NAMES.checkDuration,
        "Duration of one dedup claim round trip to the store (a batch pre-claim is one observation).",
        CHECK_DURATION_BUCKETS,
        METRIC_LABELS.checkDuration,
      );
      registry.registerMetric(h as unknown as Parameters<Registry["registerMetric"]>[0]);
      return h;
    }),
    ...eventCounters(counter),
    ...lastTimeGauges(gauge),
    handlerTime: getOrCreate(registry, METRIC_NAMES.handlerExecutionTime, () => {
      const h = new HandlerTimeHistogram(
        METRIC_NAMES.handlerExecutionTime,
        "Duration of one handler attempt (the handler itself, inside every middleware), by success (true/false).",
      );
      registry.registerMetric(h as unknown as Parameters<Registry["registerMetric"]>[0]);
      return h;
    }),
  };
  cache.set(registry, m);
  return m;
}
