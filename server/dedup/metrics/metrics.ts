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
 * - `deduplication_payload_conflicts_total{service,handler}` (ours): each copy whose UUID is
 *   `done` with another payload fingerprint (`lease` marking) — a publisher reusing UUIDs; under
 *   `onPayloadConflict: "poison"` the copy is also an `error` result and a `payload_conflict` DLQ
 *   copy, under `"swallow"` a `deduplicated` one. Alert on any increase.
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
import { checkTimesCell, collectTimes, type CheckTimeGauges, type CheckTimes } from "./check-times";
import { flushPending, handlerCells, type HandlerCells } from "./counter-cells";
import { HandlerTimeHistogram } from "./handler-time-histogram";
import { LocalHistogram } from "./local-histogram";
export { LocalHistogram };
import {
  DEDUP_ERROR_REASONS,
  DUPLICATE_CAUSES,
  METRIC_LABELS,
  METRIC_NAMES,
  PROCESSED_RESULT,
  PROCESSED_RESULTS,
  SLOW_CHECK_SECONDS,
  type DedupErrorReason,
  type DuplicateCause,
  type LabelsOf,
  type ProcessedResult,
} from "../../../names/dedup";

/**
 * Buckets of `deduplication_check_duration_seconds`: include the spec's 0.005…0.1 and the alert
 * threshold {@link SLOW_CHECK_SECONDS} (the slow checks of a window are `_count` minus its bucket).
 */
export const CHECK_DURATION_BUCKETS = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  SLOW_CHECK_SECONDS,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
];

/** `deduplication_check_duration_seconds` as the recorder uses it: a {@link LocalHistogram}, or a metric of that name already on the Registry. */
export interface CheckDurationHistogram {
  readonly name: string;
  observe(labels: { service: string }, seconds: number): void;
  get(): Promise<unknown>;
}

/** The metric objects of one Registry. */
export interface DedupMetrics extends CheckTimeGauges {
  deduplicated: Counter<LabelsOf<"deduplicated">>;
  processed: Counter<LabelsOf<"processed">>;
  checkDuration: CheckDurationHistogram;
  errors: Counter<LabelsOf<"errors">>;
  inProgress: Counter<LabelsOf<"inProgress">>;
  released: Counter<LabelsOf<"released">>;
  leaseLost: Counter<LabelsOf<"leaseLost">>;
  poisoned: Counter<LabelsOf<"poisoned">>;
  duplicatesByCause: Counter<LabelsOf<"duplicatesByCause">>;
  /** `handler_execution_time_seconds{service,handler,success}`, observed by `handlerTimer` (./handler-timer). */
  handlerTime: HandlerTimeHistogram;
  payloadConflicts: Counter<LabelsOf<"payloadConflicts">>;
  unchecked: Counter<LabelsOf<"unchecked">>;
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
    deduplicated: counter(
      METRIC_NAMES.deduplicated,
      "Deliveries swallowed by the Deduplicator as repeats (once per delivery).",
      METRIC_LABELS.deduplicated,
    ),
    processed: counter(
      METRIC_NAMES.processed,
      "Deliveries that reached the Deduplicator, by final result (once per delivery, not per retry attempt).",
      METRIC_LABELS.processed,
    ),
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
    errors: counter(
      METRIC_NAMES.errors,
      "Failed dedup store calls and key-factory failures, by reason (redis_timeout, redis_conn, marshal).",
      METRIC_LABELS.errors,
    ),
    inProgress: counter(
      METRIC_NAMES.inProgress,
      "Attempts that met a key leased by another consumer (InProgressError, retried).",
      METRIC_LABELS.inProgress,
    ),
    released: counter(
      METRIC_NAMES.released,
      "Dedup keys released after a failed attempt so that the retry runs the handler again.",
      METRIC_LABELS.released,
    ),
    leaseLost: counter(
      METRIC_NAMES.leaseLost,
      "Successful runs whose lease had been taken over by another consumer (possible double run).",
      METRIC_LABELS.leaseLost,
    ),
    poisoned: counter(
      METRIC_NAMES.poisoned,
      "Messages the PoisonQueue published to the DLQ, by error class (reason_poisoned: one of a bounded set such as marshal, redis_timeout, non_retryable, handler_error; never the error's message).",
      METRIC_LABELS.poisoned,
    ),
    payloadConflicts: counter(
      METRIC_NAMES.payloadConflicts,
      "Copies whose message UUID was already processed with another payload (a publisher reusing UUIDs), per handler; poisoned to the DLQ or swallowed per onPayloadConflict.",
      METRIC_LABELS.payloadConflicts,
    ),
    unchecked: counter(
      METRIC_NAMES.unchecked,
      "Handler runs that fail-open let through without a dedup check, by the store failure that skipped it (redis_timeout, redis_conn, marshal); once per attempt.",
      METRIC_LABELS.unchecked,
    ),
    duplicatesByCause: counter(
      METRIC_NAMES.duplicatesByCause,
      "Swallowed duplicates by cause: redelivery (same topic:partition:offset as the first delivery), republish (another position), unknown (no position stored).",
      METRIC_LABELS.duplicatesByCause,
    ),
    lastCheck: gauge(
      METRIC_NAMES.lastCheck,
      "Unix time of the handler's latest dedup check: the start of a completed claim round trip, the end of a failed one (a batch is one).",
    ),
    lastError: gauge(
      METRIC_NAMES.lastError,
      "Unix time of the handler's last failed store call or key-factory failure (each deduplication_errors_total increment).",
    ),
    lastSlowCheck: gauge(
      METRIC_NAMES.lastSlowCheck,
      `Unix time of the handler's last check slower than ${SLOW_CHECK_SECONDS} s (the latency alert's threshold).`,
    ),
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

/** What the Deduplicator records; a no-op implementation when no Registry is given. */
export interface DedupRecorder {
  /** Creates the handler's zero series (see "Zero series" above); idempotent. */
  register(topic: string, handler: string): void;
  result(topic: string, handler: string, result: ProcessedResult): void;
  /** One swallowed duplicate by cause (call with `result(…, "deduplicated")`). */
  duplicate(topic: string, handler: string, cause: DuplicateCause): void;
  /**
   * A check of `handler`'s keys (one claim round trip; a batch pre-claim is one) that ended at
   * `endMs` (`performance.now()`): its latency sample in `seconds`, or null when it is none.
   * `startMs`, for a completed check, is when it was sent: the moment it shows the store answering
   * (`last_check`). A reply that arrived before a later failure but was read after it, on a busy
   * event loop, is then no check after that failure.
   */
  check(handler: string, endMs: number, seconds: number | null, startMs?: number): void;
  /** A failed store call or key-factory failure on `handler`'s messages. */
  error(reason: DedupErrorReason, handler: string): void;
  inProgress(topic: string, handler: string): void;
  released(topic: string, handler: string): void;
  leaseLost(topic: string, handler: string): void;
  /** A copy whose UUID is done with another payload (labels service, handler). */
  payloadConflict(handler: string): void;
  /** A handler run let through without a check (fail-open), by the failure's reason. */
  unchecked(handler: string, reason: DedupErrorReason): void;
}

/** A recorder bound to one service label, with its label cells cached (hot path: no label hashing). */
export function dedupRecorder(registry: Registry | undefined, service: string): DedupRecorder {
  if (!registry) {
    const noop = () => undefined;
    return {
      register: noop,
      result: noop,
      duplicate: noop,
      check: noop,
      error: noop,
      inProgress: noop,
      released: noop,
      leaseLost: noop,
      payloadConflict: noop,
      unchecked: noop,
    };
  }
  const m = dedupMetrics(registry);
  // The first store error of each kind must be an increase from 0, not a series born at 1.
  for (const reason of DEDUP_ERROR_REASONS) m.errors.inc({ service, reason }, 0);
  // topic → handler → the handler's cells (made at its registration, or first event); the last one
  // used is kept, since a Deduplicator serves one handler as a rule: no lookup, no string building.
  const cells = new Map<string, Map<string, HandlerCells>>();
  let lastCells: HandlerCells | undefined;
  const cellsOf = (topic: string, handler: string): HandlerCells => {
    if (lastCells !== undefined && lastCells.handler === handler && lastCells.topic === topic) return lastCells;
    let byHandler = cells.get(topic);
    if (!byHandler) cells.set(topic, (byHandler = new Map()));
    let hc = byHandler.get(handler);
    if (!hc) byHandler.set(handler, (hc = handlerCells(m, service, topic, handler)));
    return (lastCells = hc);
  };
  const observe =
    m.checkDuration instanceof LocalHistogram
      ? m.checkDuration.observer({ service })
      : (s: number) => m.checkDuration.observe({ service }, s);
  const times = new Map<string, CheckTimes>();
  let last: CheckTimes | undefined; // a Deduplicator serves one handler, as a rule: no lookup then
  const timesOf = (handler: string) => {
    if (last?.labels.handler !== handler)
      last = times.get(handler) ?? times.set(handler, checkTimesCell(m, service, handler)).get(handler)!;
    return last;
  };
  return {
    register(topic, handler) {
      cellsOf(topic, handler);
    },
    result(topic, handler, result) {
      const c = cellsOf(topic, handler);
      c.processed[result].inc();
      if (result === PROCESSED_RESULT.deduplicated) c.deduplicated.inc();
    },
    duplicate: (topic, handler, cause) => cellsOf(topic, handler).cause[cause].inc(),
    check(handler, endMs, seconds, startMs) {
      const c = timesOf(handler);
      const at = startMs ?? endMs;
      // Never backwards: checks in flight together complete in any order (NaN: none yet).
      if (!(c.check >= at)) c.check = at;
      if (seconds === null) return;
      observe(seconds);
      if (seconds > SLOW_CHECK_SECONDS) c.slow = endMs;
    },
    error(reason, handler) {
      m.errors.labels({ service, reason }).inc();
      timesOf(handler).error = performance.now();
    },
    inProgress: (topic, handler) => cellsOf(topic, handler).inProgress.inc(),
    released: (topic, handler) => cellsOf(topic, handler).released.inc(),
    leaseLost: (topic, handler) => cellsOf(topic, handler).leaseLost.inc(),
    // Rare (a publisher bug): no cached cell needed.
    payloadConflict: (handler) => m.payloadConflicts.inc({ service, handler }),
    // Only while the store fails (or for a keyless record): no cached cell needed.
    unchecked: (handler, reason) => m.unchecked.inc({ service, handler, reason }),
  };
}
