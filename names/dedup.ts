/**
 * The names the library writes on its metrics and messages, written here once: metric names,
 * their label names and values, and the message metadata keys (PoisonQueue's included). Beside it,
 * each standalone: the DLQ topic, copy keys and re-drive modes (names/dlq.ts), the key prefix and
 * TTL policy (names/keys.ts), the stack order (names/stack.ts) and the self-description gauge
 * (names/contract.ts).
 *
 * **Imports nothing** (pure constants and tiny pure functions), so the dashboard, the generated
 * Prometheus rules and the browser can read the same names without pulling in prom-client or Node.
 * **Renaming a metric or a label value breaks every SRE's rules and dashboards.**
 */

/** The values of a record of names (`{ success: "success", … }` → `"success" | …`). */
export type ValueOf<T> = T[keyof T];

/** Every value of a record of names, in its order (for a label's zero series, a filter's options). */
export function valuesOf<T extends Record<string, string>>(names: T): readonly ValueOf<T>[] {
  return Object.values(names) as ValueOf<T>[];
}

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

/** Metric names: spec §7's four (`deduplicated`, `processed`, `checkDuration`, `errors`) plus ours. */
export const METRIC_NAMES = {
  deduplicated: "messages_deduplicated_total",
  processed: "messages_processed_total",
  checkDuration: "deduplication_check_duration_seconds",
  errors: "deduplication_errors_total",
  inProgress: "deduplication_in_progress_total",
  released: "deduplication_released_total",
  leaseLost: "deduplication_lease_lost_total",
  poisoned: "messages_poisoned_total",
  duplicatesByCause: "messages_duplicates_by_cause_total",
  handlerExecutionTime: "handler_execution_time_seconds",
  payloadConflicts: "deduplication_payload_conflicts_total",
  fingerprintFallbacks: "deduplication_fingerprint_fallbacks_total",
  unchecked: "deduplication_unchecked_total",
  lastCheck: "deduplication_last_check_timestamp_seconds",
  lastError: "deduplication_last_error_timestamp_seconds",
  lastSlowCheck: "deduplication_last_slow_check_timestamp_seconds",
} as const;

/**
 * The hot-UUID gauges each consumer exports (its sketch's top `HOT_UUID_TOP_K` per handler, so the
 * dashboard merges every process's from Prometheus): `copies{service, handler, topic, uuid}` are
 * the swallowed copies counted over the current and the previous window (an upper bound), and
 * `errorBound{service, handler}` how many copies a UUID not listed may have had, and how much a
 * listed count may be over. A UUID that leaves the top-k leaves the gauge (bounded cardinality).
 */
export const HOT_UUID_METRICS = {
  copies: "dedup_hot_uuid_copies",
  errorBound: "dedup_hot_uuid_error_bound",
} as const;

/** UUIDs per handler each process exports on {@link HOT_UUID_METRICS}. */
export const HOT_UUID_TOP_K = 10;

/**
 * A check slower than this (seconds) is slow: the latency alert's threshold (spec §8: p99 over
 * 50 ms), a bucket bound of the check-duration histogram (so the slow checks of a window are
 * `_count` minus that bucket) and what the last-slow-check gauge records.
 */
export const SLOW_CHECK_SECONDS = 0.05;

/** Label names of the library's metrics, each written once here. */
export const LABEL = {
  service: "service",
  topic: "topic",
  handler: "handler",
  result: "result",
  reason: "reason",
  reasonPoisoned: "reason_poisoned",
  cause: "cause",
  success: "success",
  difference: "difference",
} as const;

const HANDLER_LABELS = [LABEL.service, LABEL.topic, LABEL.handler] as const;

/**
 * The label names of each library metric (spec §7 for the first four). `DedupMetrics`, the alert
 * expressions and the dashboard's named queries derive theirs from this record; a metric name
 * without an entry here is a type error.
 */
export const METRIC_LABELS = {
  deduplicated: HANDLER_LABELS,
  processed: [...HANDLER_LABELS, LABEL.result],
  checkDuration: [LABEL.service],
  errors: [LABEL.service, LABEL.reason],
  inProgress: HANDLER_LABELS,
  released: HANDLER_LABELS,
  leaseLost: HANDLER_LABELS,
  poisoned: [...HANDLER_LABELS, LABEL.reasonPoisoned],
  duplicatesByCause: [...HANDLER_LABELS, LABEL.cause],
  // Watermill's labels are handler_name and success; ours carry the service and no topic (one per attempt).
  handlerExecutionTime: [LABEL.service, LABEL.handler, LABEL.success],
  // The difference says what was compared: the handler's chosen fields, or the payload's bytes.
  payloadConflicts: [LABEL.service, LABEL.handler, LABEL.difference],
  // Only handlers with chosen fingerprint fields have it: a payload that was not JSON, fingerprinted by its bytes.
  fingerprintFallbacks: [LABEL.service, LABEL.handler],
  // The reason is the error's (deduplication_errors_total): which store failure let the run through.
  unchecked: [LABEL.service, LABEL.handler, LABEL.reason],
  // Unix seconds of the handler's last check, last failed store call and last slow check (each replica its own).
  lastCheck: [LABEL.service, LABEL.handler],
  lastError: [LABEL.service, LABEL.handler],
  lastSlowCheck: [LABEL.service, LABEL.handler],
} as const satisfies Record<keyof typeof METRIC_NAMES, readonly string[]>;

/**
 * What the alert and the dashboard sum the payload conflicts by: per handler, every `difference`
 * together (a conflict is a publisher bug whatever differed; the label tells which kind when read).
 */
export const PAYLOAD_CONFLICT_GROUP = [LABEL.service, LABEL.handler] as const;

/** The label names of one library metric, as a union (for prom-client's `Counter<L>`). */
export type LabelsOf<K extends keyof typeof METRIC_LABELS> = (typeof METRIC_LABELS)[K][number];

/** One library metric name. */
export type LibraryMetricName = ValueOf<typeof METRIC_NAMES>;

/** The values of the `success` label of `handler_execution_time_seconds` (Watermill's strings). */
export const HANDLER_SUCCESS = { true: "true", false: "false" } as const;

/** The success label of `handler_execution_time_seconds`. */
export type HandlerSuccess = ValueOf<typeof HANDLER_SUCCESS>;

/** Both values of {@link HandlerSuccess}: each exists at 0 per handler from its registration. */
export const HANDLER_SUCCESSES = valuesOf(HANDLER_SUCCESS);

/** The values of the `result` label of `messages_processed_total` (spec §7). */
export const PROCESSED_RESULT = { success: "success", error: "error", deduplicated: "deduplicated" } as const;

/** The result label of `messages_processed_total`. */
export type ProcessedResult = ValueOf<typeof PROCESSED_RESULT>;

/** All values of {@link ProcessedResult}. */
export const PROCESSED_RESULTS = valuesOf(PROCESSED_RESULT);

/** The values of the `reason` label of `deduplication_errors_total` (spec §7). */
export const DEDUP_ERROR_REASON = {
  /** A store call slower than `timeoutMs`. */
  redisTimeout: "redis_timeout",
  /** Connection refused / closed, or any other store error. */
  redisConn: "redis_conn",
  /** The key factory threw: the message cannot be keyed (a publisher bug, not a Redis incident). */
  marshal: "marshal",
} as const;

/** The `reason` label of `deduplication_errors_total` (spec §7). */
export type DedupErrorReason = ValueOf<typeof DEDUP_ERROR_REASON>;

/** All values of {@link DedupErrorReason} (each series exists at 0 from a service's start-up). */
export const DEDUP_ERROR_REASONS = valuesOf(DEDUP_ERROR_REASON);

/**
 * The `reason_poisoned` label values of `messages_poisoned_total` — the whole bounded set
 * `poisonReasonClass` maps every error into:
 * - `redis_timeout`, `redis_conn`, `marshal`: a `DedupStoreError` (fail-closed store failure, or a
 *   message the key factory cannot key) — the `deduplication_errors_total` reasons;
 * - `non_retryable`: a `NonRetryableError` (bad payload: retrying cannot help);
 * - `in_progress`: an `InProgressError` that outlasted the retries (only without the default
 *   `notInProgress` filter, which nacks it instead);
 * - `payload_conflict`: a `PayloadConflictError` — a copy whose UUID is `done` but whose payload
 *   differs from the one processed (a publisher that reuses UUIDs; `onPayloadConflict: "poison"`);
 * - `handler_error`: anything else (the handler failed through every retry).
 */
export const POISON_REASON_CLASS = {
  ...DEDUP_ERROR_REASON,
  nonRetryable: "non_retryable",
  inProgress: "in_progress",
  payloadConflict: "payload_conflict",
  handlerError: "handler_error",
} as const satisfies Record<string, string>;

/** A `reason_poisoned` label value. */
export type PoisonReasonClass = ValueOf<typeof POISON_REASON_CLASS>;

/** Every {@link PoisonReasonClass}: each exists at 0 per handler from its registration. */
export const POISON_REASON_CLASSES = valuesOf(POISON_REASON_CLASS);

/**
 * The values of the `difference` label of `deduplication_payload_conflicts_total`: what differed
 * between the copy and the processed message.
 */
export const PAYLOAD_DIFFERENCE = {
  /** The handler's chosen fields (its `fingerprint` option) of the two JSON payloads differ. */
  fields: "fields",
  /**
   * The payload bytes differ, and nothing finer was compared: the handler chose no fields, or the
   * copy's payload is not JSON (its fingerprint falls back to the bytes).
   */
  bytes: "bytes",
} as const;

/** The difference label of `deduplication_payload_conflicts_total`. */
export type PayloadDifference = ValueOf<typeof PAYLOAD_DIFFERENCE>;

/** All values of {@link PayloadDifference} (each series exists at 0 per handler from its registration). */
export const PAYLOAD_DIFFERENCES = valuesOf(PAYLOAD_DIFFERENCE);

/**
 * The values of the `cause` label of `messages_duplicates_by_cause_total`: what a swallowed copy
 * was, from the position (`topic:partition:offset`) stored in the key's `done` value.
 */
export const DUPLICATE_CAUSE = {
  /** The same position as the first delivery: a retry, a rebalance or a restart before the commit re-read it. */
  redelivery: "redelivery",
  /** Another position: the same event was published again (producer retry, outbox forwarder, DLQ replay). */
  republish: "republish",
  /** No position to compare: an old `done` key, the `release` / `naive` markings, or a message without one. */
  unknown: "unknown",
} as const;

/** The cause label of `messages_duplicates_by_cause_total`. */
export type DuplicateCause = ValueOf<typeof DUPLICATE_CAUSE>;

/** All values of {@link DuplicateCause}. */
export const DUPLICATE_CAUSES = valuesOf(DUPLICATE_CAUSE);

// ---------------------------------------------------------------------------------------------
// Message metadata keys
// ---------------------------------------------------------------------------------------------

/** Metadata key of the correlation id shared by a whole chain of events (spec §6). Not a dedup key. */
export const CORRELATION_ID_KEY = "Correlation-Id";
/** Metadata key of the event type (used by the demo's routing). */
export const EVENT_TYPE_KEY = "Event-Type";
/** Kafka header that carries `Message.uuid` in Watermill's Kafka marshaler (spec §2, interop). */
export const WATERMILL_UUID_HEADER = "_watermill_message_uuid";

/** PoisonQueue metadata: the error message of the handler failure that poisoned the message. */
export const REASON_POISONED_KEY = "reason_poisoned";
/** PoisonQueue metadata: the topic the message was consumed from. */
export const TOPIC_POISONED_KEY = "topic_poisoned";
/** PoisonQueue metadata: the handler that failed on it. */
export const HANDLER_POISONED_KEY = "handler_poisoned";
/** PoisonQueue metadata: the subscriber (transport) that delivered it. */
export const SUBSCRIBER_POISONED_KEY = "subscriber_poisoned";

/** What PoisonQueue records on a DLQ copy: the error's text and bounded class, and where the message failed. */
export interface Poisoning {
  readonly reason: string;
  readonly reasonClass: PoisonReasonClass;
  readonly topic: string;
  readonly handler: string;
  readonly subscriber: string;
}

/** The metadata PoisonQueue adds to a DLQ copy: a {@link Poisoning} under Watermill's four keys and ours for the class. */
export function poisonedMetadata(p: Poisoning): Record<string, string> {
  return {
    [REASON_POISONED_KEY]: p.reason,
    [TOPIC_POISONED_KEY]: p.topic,
    [HANDLER_POISONED_KEY]: p.handler,
    [SUBSCRIBER_POISONED_KEY]: p.subscriber,
    [REASON_CLASS_POISONED_KEY]: p.reasonClass,
  };
}

/** The four PoisonQueue metadata keys, in Watermill's names. */
export const POISON_KEYS = [
  REASON_POISONED_KEY,
  TOPIC_POISONED_KEY,
  HANDLER_POISONED_KEY,
  SUBSCRIBER_POISONED_KEY,
] as const;
/**
 * PoisonQueue metadata (ours, beside Watermill's four): the bounded class of the error
 * ({@link PoisonReasonClass}), so the DLQ browser files a record under the class the metric counted
 * it in — an error's text alone cannot tell a `NonRetryableError` from any other failure.
 */
export const REASON_CLASS_POISONED_KEY = "reason_class_poisoned";
/**
 * Metadata of a DLQ copy of a record without a UUID (ours): the source record's partition and
 * offset. With `topic_poisoned` they are its position, the key of its one DLQ copy
 * (`dlqCopyKey`): a redelivered record does not get a second copy.
 */
export const PARTITION_POISONED_KEY = "partition_poisoned";
/** See {@link PARTITION_POISONED_KEY}. */
export const OFFSET_POISONED_KEY = "offset_poisoned";
/** Every metadata key PoisonQueue or a transport adds to a DLQ copy; a re-drive removes them all. */
export const POISON_METADATA_KEYS = [
  ...POISON_KEYS,
  REASON_CLASS_POISONED_KEY,
  PARTITION_POISONED_KEY,
  OFFSET_POISONED_KEY,
] as const;
