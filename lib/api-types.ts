/**
 * Response shapes of the dashboard API (`app/api/**`), as zod schemas with their inferred types.
 *
 * Isomorphic: no Node imports. The server builds these objects (`server/observe`), the route tests
 * parse responses with the schemas, and the UI may parse with them too (`XxxSchema.parse(json)`).
 *
 * Conventions:
 * - A field whose upstream (Prometheus or Redis) did not answer is `{ status: "unavailable", detail }`
 *   instead of its value, and the rest of the response still answers ({@link unavailableSchema}).
 *   A value that exists but has no data (no traffic yet) is `null`, never a fake 0.
 * - Times are ISO-8601 strings; durations are milliseconds (`…Ms`) or seconds (`…Seconds`) as named;
 *   rates are per second; ratios are 0..1.
 * - Every 4xx/5xx body is {@link ErrorBody} `{ error, detail }`.
 */
import { z } from "zod";
import { parseLookupInput } from "./lookup-input";
import { ALERT_UNITS } from "@/lib/alert-model";
import { alertmanagerInstanceSchema, alertmanagerPartSchema } from "./alertmanager-types";

// ---------------------------------------------------------------------------------------------
// Common pieces

/** The error codes of every API answer (dashboard, workshop, demo, and the proxy's refusals). */
export const ERROR_CODES = [
  "bad_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "length_required",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "unavailable",
  "internal",
] as const;

/**
 * Error body of every non-2xx answer of every route (server/http.ts writes it): `error` is a short
 * machine code, `detail` says what to fix; `runId` is set on a workshop 409 (the run in progress).
 */
export const errorBodySchema = z.object({
  error: z.enum(ERROR_CODES),
  detail: z.string(),
  runId: z.string().optional(),
});
/** Error body of every non-2xx answer. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Marker in place of a value whose upstream is down or not configured. */
export const unavailableSchema = z.object({
  status: z.literal("unavailable"),
  /** Which upstream and why, e.g. "prometheus: connect ECONNREFUSED 127.0.0.1:9090". */
  detail: z.string(),
});
/** Marker in place of a value whose upstream is down or not configured. */
export type Unavailable = z.infer<typeof unavailableSchema>;

/**
 * `{ status: "ok", ...shape }` or {@link Unavailable}: a field that depends on one upstream.
 * Narrow with `if (x.status === "ok")`.
 */
export function availableSchema<T extends z.ZodRawShape>(shape: T) {
  return z.discriminatedUnion("status", [z.object({ status: z.literal("ok"), ...shape }), unavailableSchema]);
}

/** Time ranges the dashboard offers (URL `range=`); default `1h`. */
export const RANGES = ["5m", "15m", "1h", "6h", "24h", "7d"] as const;
/** One time range. */
export type RangeKey = (typeof RANGES)[number];
/** Schema of a time range. */
export const rangeSchema = z.enum(RANGES);

/** Where metric values come from: a Prometheus server, or the app's own registry (embedded mode). */
export const metricsSourceSchema = z.enum(["prometheus", "local"]);
/** Where metric values come from. */
export type MetricsSource = z.infer<typeof metricsSourceSchema>;

/** Health of one upstream as seen by the request that built the response. */
export const upstreamSchema = z.object({
  status: z.enum(["up", "down", "not-configured"]),
  /** Error text when down, a short description ("redis cluster, 3 masters") when up. */
  detail: z.string(),
});
/** Health of one upstream. */
export type Upstream = z.infer<typeof upstreamSchema>;

/** Alert states as Prometheus names them. */
export const alertStateSchema = z.enum(["inactive", "pending", "firing"]);
/** One alert state. */
export type AlertStateName = z.infer<typeof alertStateSchema>;

/** Outcome of one `lintHandler` rule (library) or of the observed-TTL policy check. */
export const findingSchema = z.object({
  severity: z.enum(["error", "warning", "info"]),
  rule: z.string(),
  message: z.string(),
  /** Section of the spec the rule comes from, e.g. "§3". */
  specSection: z.string(),
});
/** One lint finding. */
export type Finding = z.infer<typeof findingSchema>;

/**
 * State of one dedup key, from its value: `processing` (`processing:<token>`, a lease held by a
 * running handler), `done` (the lease marking's completed value), `marked` (`1` of the naive
 * marking or `claimed:<token>` of the release marking, set once), `other` (anything else, or not a string key).
 */
export const keyStateSchema = z.enum(["processing", "done", "marked", "other"]);
/** State of one dedup key. */
export type KeyState = z.infer<typeof keyStateSchema>;

/** Thresholds the charts draw, copied from `lib/thresholds.ts` so a response is self-describing. */
export const thresholdsViewSchema = z.object({
  duplicateRatio: z.number(),
  duplicateRatioNormal: z.number(),
  duplicateRatioFor: z.string(),
  errorRate: z.number(),
  errorRateFor: z.string(),
  checkP99Seconds: z.number(),
  checkP99For: z.string(),
  ttlPolicy: z.object({
    defaultMs: z.number(),
    criticalMs: z.number(),
    analyticsMaxMs: z.number(),
    minimumMs: z.number(),
    warnBelowMs: z.number(),
  }),
});
/** Thresholds the charts draw. */
export type ThresholdsView = z.infer<typeof thresholdsViewSchema>;

/** One alert instance (one alert × one label set). */
export const alertInstanceSchema = z.object({
  /** An alert name of `ALERT_LIST` (lib/thresholds). */
  alert: z.string(),
  state: alertStateSchema,
  /** The instance's labels (service, topic, handler, reason… as the rule groups by). */
  labels: z.record(z.string(), z.string()),
  /** When the condition started to hold (pending since); `null` when inactive. */
  activeAt: z.string().nullable(),
  /**
   * When it turned firing: the first rule evaluation at or after `activeAt + for`
   * (lib/alert-transitions); `null` unless firing.
   */
  firingSince: z.string().nullable(),
  /** While pending: the evaluation at which it fires if the condition keeps holding; `null` otherwise. */
  firesAt: z.string().nullable(),
  /** The alert expression's current value, when known. */
  value: z.number().nullable(),
  severity: z.string(),
  summary: z.string(),
  /** Alertmanager's state of the instance (`GET /api/alerts` with `ALERTMANAGER_URL` set and answering). */
  alertmanager: alertmanagerInstanceSchema.optional(),
});
/** One alert instance. */
export type AlertInstance = z.infer<typeof alertInstanceSchema>;

/** One alert rule and its worst state over its instances. */
export const alertRuleSchema = z.object({
  alert: z.string(),
  /** Worst state over the instances (`inactive` when none). */
  state: alertStateSchema,
  title: z.string(),
  expr: z.string(),
  for: z.string(),
  threshold: z.number(),
  unit: z.enum(ALERT_UNITS),
  runbookUrl: z.string(),
  /** Time between two evaluations of the rule (the group's interval; the sample interval in embedded mode). */
  evaluationIntervalMs: z.number(),
  instances: z.array(alertInstanceSchema),
});
/** One alert rule with its instances. */
export type AlertRule = z.infer<typeof alertRuleSchema>;

/**
 * Why the alert states are not known, since when, and what they were when last read: a badge then
 * says "unknown (Prometheus unavailable since …)" with the last known state, never "inactive".
 */
export const alertsUnknownSchema = z.object({
  /** When reads of the rule states started failing; null when not known (first read failed). */
  since: z.string().nullable(),
  /** When the last known states were read; null when never. */
  lastKnownAt: z.string().nullable(),
});
/** Alert states that cannot be read now. */
export type AlertsUnknown = z.infer<typeof alertsUnknownSchema>;

/**
 * The alert rules, or {@link Unavailable} with since when and the last rules read (`lastKnown`,
 * each badge then shows its last state as unknown).
 */
export const alertsFieldSchema = z.discriminatedUnion("status", [
  z.object({ status: z.literal("ok"), rules: z.array(alertRuleSchema) }),
  unavailableSchema.extend({
    unknown: alertsUnknownSchema.optional(),
    /** The rules as last read (at `unknown.lastKnownAt`); absent when never read. */
    lastKnown: z.array(alertRuleSchema).optional(),
  }),
]);
/** The alerts field of the overview and alerts answers. */
export type AlertsField = z.infer<typeof alertsFieldSchema>;

/** TTL distribution bucket: keys whose remaining TTL is in `[minMs, maxMs)`; `maxMs: null` = no upper bound. */
export const ttlBucketSchema = z.object({
  label: z.string(),
  minMs: z.number(),
  maxMs: z.number().nullable(),
  count: z.number(),
  /** Of `count`, `processing` leases (in flight or abandoned), scaled from the sampled states like the rest. */
  processing: z.number(),
});
/** One TTL bucket. */
export type TtlBucket = z.infer<typeof ttlBucketSchema>;

/** Progress of the key-count scan: keys visited so far out of the keyspace size (DBSIZE sum). */
export const scanProgressSchema = z.object({
  scanned: z.number(),
  total: z.number(),
  done: z.boolean(),
  /** `exact` (full SCAN) or `estimate` (RANDOMKEY sample × DBSIZE). */
  mode: z.enum(["exact", "estimate"]),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
/** Progress of the key-count scan. */
export type ScanProgress = z.infer<typeof scanProgressSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/handlers[?refresh=1][&mode=estimate]

/** What Redis holds for one handler prefix `<service>:dedup:<handler>`. */
export const handlerKeysSchema = z.object({
  service: z.string(),
  handler: z.string(),
  /** Literal key prefix without the trailing `:`, e.g. `notification:dedup:on-review-created`. */
  prefix: z.string(),
  /** Live keys: exact count, or the estimate when `exact` is false. */
  keyCount: z.number(),
  exact: z.boolean(),
  /** ± bound of `keyCount` at 99.9% confidence (0 when exact). */
  errorBound: z.number(),
  /** Keys without a TTL (they never expire: a bug). Exact when `noTtlExact`, else scaled from a sample. */
  noTtlCount: z.number(),
  /** `noTtlCount` is exact (every key checked, or the database has no key without TTL at all). */
  noTtlExact: z.boolean(),
  /** `ttlBuckets`/`ttlObserved` come from a uniform sample of the handler's keys scaled to `keyCount`. */
  ttlSampled: z.boolean(),
  ttlBuckets: z.array(ttlBucketSchema),
  /**
   * Mean bytes per key over a sample of keys: `MEMORY USAGE` plus the key's share of the main and
   * expires dicts (`MEMORY STATS`), which `MEMORY USAGE` leaves out; `null` when no key was sampled.
   */
  bytesPerKey: z.number().nullable(),
  /** `bytesPerKey` is an estimate (embedded mode: heap bytes of key, value and entry), not Redis' `MEMORY USAGE`. */
  bytesEstimated: z.boolean().optional(),
  /** Sampled key states, as counts over `sampleSize` keys. */
  states: z.object({ processing: z.number(), done: z.number(), marked: z.number(), other: z.number() }),
  sampleSize: z.number(),
  /**
   * `keyCount` split by state: the sampled shares scaled to the count (exact when the sample was
   * every key). `processing` are leases: real in-flight work, or abandoned claims until they expire.
   */
  byState: z.object({ processing: z.number(), done: z.number(), marked: z.number(), other: z.number(), exact: z.boolean() }),
  /** `processing` ÷ all keys (0..1); `null` when no key was sampled. */
  leaseShare: z.number().nullable(),
  /** Smallest remaining TTL (ms) among sampled keys that are not leases: the oldest key's age is the window minus it; `null` when none. */
  settledMinTtlMs: z.number().nullable(),
  /** When the count these numbers come from finished (ISO). Every page shows the same completed count with this time. */
  countedAt: z.string(),
  /** Observed TTLs (remaining, ms) over the keys seen; `null` when no key has one. */
  ttlObserved: z.object({ minMs: z.number(), maxMs: z.number(), p50Ms: z.number() }).nullable(),
  scan: scanProgressSchema,
});
/** What Redis holds for one handler prefix. */
export type HandlerKeys = z.infer<typeof handlerKeysSchema>;

/** Answer of `GET /api/handlers`. */
export const handlersResponseSchema = z.object({
  generatedAt: z.string(),
  redis: upstreamSchema,
  /** Configured globs the inspector is confined to (`DEDUP_PREFIXES`). */
  prefixes: z.array(z.string()),
  /** Where the keys are: Redis, the embedded mode's in-memory store, or nowhere inspectable. */
  store: z.enum(["redis", "memory", "none"]).optional(),
  scan: scanProgressSchema,
  /** Whether `refresh=1` started a new scan (false when rate-limited or one is running). */
  refresh: z.object({ requested: z.boolean(), started: z.boolean(), retryAfterMs: z.number() }),
  /** Empty (not absent) while the first scan runs or when Redis is down; see `redis` and `scan`. */
  handlers: z.array(handlerKeysSchema),
  /** Keys without TTL over all handlers (flag when > 0). */
  noTtlTotal: z.number(),
});
/** Answer of `GET /api/handlers`. */
export type HandlersResponse = z.infer<typeof handlersResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/overview?range=

/** Per-handler row of the overview. */
export const overviewHandlerSchema = z.object({
  service: z.string(),
  handler: z.string(),
  /** Topics seen in the handler's metrics (may be empty). */
  topics: z.array(z.string()),
  /** TTL class declared by the app's handlers (demo), `null` for a handler only seen in Redis/metrics. */
  ttlClass: z.enum(["default", "critical", "analytics"]).nullable(),
  /** Current duplicate ratio over 5 min; `value: null` when the handler had no traffic. */
  duplicateRatio: availableSchema({ value: z.number().nullable() }),
  /** Processed messages/s over 5 min, total and by result. */
  processedRate: availableSchema({
    total: z.number(),
    byResult: z.object({ success: z.number(), error: z.number(), deduplicated: z.number() }),
  }),
  /** Check latency of the handler's service (the histogram is per service), timed in the consumer. */
  checkLatency: availableSchema({ p50Seconds: z.number().nullable(), p99Seconds: z.number().nullable() }),
  /**
   * What the check p99 is made of: the consumer's event-loop delay (p99, seconds) and Redis' own
   * time per call of the dedup's commands (µs, the slowest of set/eval/evalsha/del over ~15 s;
   * `null` without Redis), and which of the two dominates.
   */
  latencyParts: z
    .object({
      eventLoopP99Seconds: z.number().nullable(),
      redisUsecPerCall: z.number().nullable(),
      dominant: z.enum(["consumer", "redis"]).nullable(),
    })
    .optional(),
  /** Dedup errors/s of the handler's service, by reason. */
  errorRates: availableSchema({ byReason: z.record(z.string(), z.number()), total: z.number() }),
  /** Keys in Redis (from the last inspection). */
  keys: availableSchema({
    count: z.number(),
    exact: z.boolean(),
    errorBound: z.number(),
    noTtlCount: z.number(),
    scanDone: z.boolean(),
    /** The count split: settled keys (done, marked, other) and `processing` leases, with the leases' share. */
    settled: z.number(),
    processing: z.number(),
    /** The split is a count (the sample held every key), not a scaled share. */
    splitExact: z.boolean(),
    leaseShare: z.number().nullable(),
    /** When the shown count finished; `null` when no key of this handler was counted. */
    countedAt: z.string().nullable(),
    /** Progress (0..1) of a recount running now, `null` when none runs: the shown count stays the last completed one. */
    recount: z.number().nullable(),
  }),
  /** Alert instances whose labels belong to this handler or its service (the last known ones when `alertsUnknown`). */
  alerts: z.array(alertInstanceSchema),
  /** Set when the alert states cannot be read now: `alerts` is then the last known state, not the current one. */
  alertsUnknown: alertsUnknownSchema.nullable().optional(),
});
/** Per-handler row of the overview. */
export type OverviewHandler = z.infer<typeof overviewHandlerSchema>;

/** Answer of `GET /api/overview`. */
/**
 * One service's replicas as Prometheus scrapes them (`dedup_consumer_info{service, replica}` with
 * the scrape's `instance`) against the members of its consumer groups (by the replica id in each
 * member's clientId). `mismatch` = some member is not scraped, or a scraped replica is in no group.
 */
export const scrapeCoverageSchema = z.object({
  service: z.string(),
  /** Distinct `instance` labels (scrape targets) exporting a replica of the service. */
  instances: z.number().int(),
  /** Replica ids Prometheus sees, sorted. */
  scrapedReplicas: z.array(z.string()),
  /** Replica ids in the service's consumer groups, sorted. */
  memberReplicas: z.array(z.string()),
  /** Members Prometheus does not scrape: their traffic is missing from every figure. */
  unscraped: z.array(z.string()),
  /** Scraped replicas in no group (stopped within Prometheus's staleness window, or not joined yet). */
  notInGroups: z.array(z.string()),
  /** Share of the groups' assigned partitions held by scraped replicas (0..1); null without assignments. */
  scrapedShare: z.number().nullable(),
  mismatch: z.boolean(),
  /** The banner's sentence when `mismatch`, else null. */
  message: z.string().nullable(),
});
/** One service's scraped replicas against its consumer groups' members. */
export type ScrapeCoverage = z.infer<typeof scrapeCoverageSchema>;

export const overviewResponseSchema = z.object({
  generatedAt: z.string(),
  mode: z.enum(["embedded", "real"]),
  range: rangeSchema,
  source: metricsSourceSchema,
  upstream: z.object({ prometheus: upstreamSchema, redis: upstreamSchema }),
  thresholds: thresholdsViewSchema,
  handlers: z.array(overviewHandlerSchema),
  /** All alert rules with their instances (unavailable when the alert source is down, with the last known). */
  alerts: alertsFieldSchema,
  /**
   * Per service, the replicas Prometheus scrapes against its consumer groups' members; null
   * without Kafka (embedded mode: one process, which the local registry sees whole).
   */
  scrapeCoverage: availableSchema({ services: z.array(scrapeCoverageSchema) }).nullable(),
});
/** Answer of `GET /api/overview`. */
export type OverviewResponse = z.infer<typeof overviewResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/series?metric=&service=&handler=&range=&step=

/** Named series the API serves; the PromQL behind each is fixed on the server. */
export const SERIES_METRICS = [
  "duplicate_ratio",
  "processed_rate",
  "check_latency",
  "error_rate",
  "dlq_rate",
  "duplicates_by_cause",
  "handler_time",
  "lease_events",
  "payload_conflicts",
  "consumer_lag",
] as const;
/** One named series. */
export type SeriesMetric = (typeof SERIES_METRICS)[number];
/** Schema of a named series. */
export const seriesMetricSchema = z.enum(SERIES_METRICS);

/** One line of a chart: its labels, a legend name, and `[unixSeconds, value|null]` points. */
export const seriesLineSchema = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()),
  points: z.array(z.tuple([z.number(), z.number().nullable()])),
});
/** One line of a chart. */
export type SeriesLine = z.infer<typeof seriesLineSchema>;

/** Answer of `GET /api/series`. */
export const seriesResponseSchema = z.object({
  generatedAt: z.string(),
  metric: seriesMetricSchema,
  range: rangeSchema,
  stepSeconds: z.number(),
  source: metricsSourceSchema,
  unit: z.enum(ALERT_UNITS),
  /** Lines to draw across the chart (alert threshold, normal band). */
  thresholds: z.array(z.object({ value: z.number(), label: z.string(), kind: z.enum(["alert", "normal"]) })),
  data: availableSchema({ series: z.array(seriesLineSchema) }),
});
/** Answer of `GET /api/series`. */
export type SeriesResponse = z.infer<typeof seriesResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/alerts

/** Answer of `GET /api/alerts`. */
export const alertsResponseSchema = z.object({
  generatedAt: z.string(),
  /** `prometheus` = rule states from `/api/v1/rules`; `local` = evaluated in-process from thresholds + `for`. */
  source: metricsSourceSchema,
  alerts: alertsFieldSchema,
  /** Alertmanager's silences (each instance carries Alertmanager's state), or why not. */
  alertmanager: alertmanagerPartSchema,
});
/** Answer of `GET /api/alerts`. */
export type AlertsResponse = z.infer<typeof alertsResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/capacity

/** Capacity projection of one handler next to what Redis holds. */
export const capacityHandlerSchema = z.object({
  service: z.string(),
  handler: z.string(),
  prefix: z.string(),
  /** Window used for the projection and where it came from. */
  ttlMs: z.number().nullable(),
  ttlSource: z.enum(["declared", "observed", "default"]),
  /** New (non-deduplicated) messages/s over 5 min; unavailable when metrics are down. */
  newRate: availableSchema({ value: z.number().nullable() }),
  /**
   * How much of the TTL window has passed since keys began to be written: from the oldest settled
   * key in Redis (window − its remaining TTL), or, without Redis (embedded, in-memory store), the
   * process start. While `filled` < 1 the projection covers only the filled share and gap notes
   * wait until `validAt`. `null` when unknown.
   */
  window: z
    .object({ ageMs: z.number(), filled: z.number(), validAt: z.string().nullable(), source: z.enum(["oldest-key", "process-start"]) })
    .nullable(),
  /** newRate × min(TTL, window age). `null` when the rate is unknown. */
  projectedKeys: z.number().nullable(),
  /** projectedKeys × bytesPerKey. */
  projectedBytes: z.number().nullable(),
  measured: availableSchema({
    keys: z.number(),
    exact: z.boolean(),
    errorBound: z.number(),
    bytesPerKey: z.number().nullable(),
    bytes: z.number().nullable(),
    noTtlCount: z.number(),
    /** Of `keys`, `processing` leases, and their share (0..1, `null` unknown). */
    processing: z.number(),
    leaseShare: z.number().nullable(),
    /** When the count finished (ISO), `null` when no key was counted. */
    countedAt: z.string().nullable(),
  }),
  /** measured / projected keys (1 = as expected); `null` when either side is unknown or projected is 0. */
  gapRatio: z.number().nullable(),
  /** Human notes on a gap: "keys without TTL", "more keys than projected: stale keys or a longer TTL"… */
  notes: z.array(z.string()),
});
/** Capacity projection of one handler. */
export type CapacityHandler = z.infer<typeof capacityHandlerSchema>;

/** Answer of `GET /api/capacity`. */
export const capacityResponseSchema = z.object({
  generatedAt: z.string(),
  source: metricsSourceSchema,
  handlers: z.array(capacityHandlerSchema),
  totals: z.object({ projectedKeys: z.number().nullable(), measuredKeys: z.number().nullable(), measuredBytes: z.number().nullable() }),
});
/** Answer of `GET /api/capacity`. */
export type CapacityResponse = z.infer<typeof capacityResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/lint

/** Lint of one declared handler (the library's `lintHandler`). */
export const declaredLintSchema = z.object({
  service: z.string(),
  handler: z.string(),
  ttlClass: z.enum(["default", "critical", "analytics"]).nullable(),
  ttlMs: z.number().nullable(),
  /** The declared `leaseMs` of its Deduplicator. */
  leaseMs: z.number().nullable(),
  /** p99 of one handler attempt over the last hour, seconds; `null` without data or metrics. */
  handlerP99Seconds: z.number().nullable(),
  findings: z.array(findingSchema),
});
/** Lint of one handler found in Redis (TTL policy against observed TTLs). */
export const observedLintSchema = z.object({
  service: z.string(),
  handler: z.string(),
  prefix: z.string(),
  ttlObserved: z.object({ minMs: z.number(), maxMs: z.number(), p50Ms: z.number() }).nullable(),
  noTtlCount: z.number(),
  findings: z.array(findingSchema),
});

/** Answer of `GET /api/lint`. */
export const lintResponseSchema = z.object({
  generatedAt: z.string(),
  /** The app's own handlers as declared (their setup); unavailable when the library lint is missing. */
  declared: availableSchema({ handlers: z.array(declaredLintSchema) }),
  /** Every handler prefix found in Redis, checked against the TTL policy of spec §3. */
  observed: availableSchema({ handlers: z.array(observedLintSchema) }),
});
/** Answer of `GET /api/lint`. */
export type LintResponse = z.infer<typeof lintResponseSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/keys?prefix=&cursor=&count=   and   GET /api/keys/lookup?uuid=

/** One key of the key browser. */
export const keyEntrySchema = z.object({
  key: z.string(),
  /** Last `:` segment of the key (the message UUID). */
  uuid: z.string(),
  state: keyStateSchema,
  /** Remaining TTL in ms; -1 = no TTL (never expires: a bug); `null` = the key vanished meanwhile. */
  ttlMs: z.number().nullable(),
  /** `MEMORY USAGE key SAMPLES 0`; `null` when unknown. */
  bytes: z.number().nullable(),
  /** `bytes` is an estimate (embedded mode's in-memory store), not `MEMORY USAGE`. */
  bytesEstimated: z.boolean().optional(),
  /** The record of the first delivery, from a `done:<topic>:<partition>:<offset>` value; `null` for other values. */
  record: z.object({ topic: z.string(), partition: z.number(), offset: z.string() }).nullable().optional(),
});
/** One key of the key browser. */
export type KeyEntry = z.infer<typeof keyEntrySchema>;

/** Answer of `GET /api/keys`. */
export const keysResponseSchema = z.object({
  generatedAt: z.string(),
  /** The literal handler prefix paged through. */
  prefix: z.string(),
  keys: z.array(keyEntrySchema),
  /** Opaque cursor for the next page; `null` when the scan is complete. */
  cursor: z.string().nullable(),
  /** Keys of `<prefix>:*` inside `DEDUP_PREFIXES` that this page's SCAN calls returned (keys outside the globs are never counted). */
  visited: z.number(),
});
/** Answer of `GET /api/keys`. */
export type KeysResponse = z.infer<typeof keysResponseSchema>;

/** Answer of `GET /api/keys/lookup`. */
export const keyLookupResponseSchema = z.object({
  generatedAt: z.string(),
  uuid: z.string(),
  /** Handler prefixes checked (known from inspection and declarations). */
  checkedPrefixes: z.number(),
  matches: z.array(keyEntrySchema.extend({ service: z.string(), handler: z.string(), prefix: z.string() })),
});
/** Answer of `GET /api/keys/lookup`. */
export type KeyLookupResponse = z.infer<typeof keyLookupResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Query parameters (the routes parse with these; the UI may build URLs with the same names).
// Unknown parameters are ignored. A bad value is a 400 `{ error: "bad_request", detail }`.

/** A service or handler name as it appears in labels and key prefixes. */
const nameParam = z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters");
const flag = z.enum(["0", "1", "true", "false"]).transform((v) => v === "1" || v === "true");

/** `GET /api/overview?range=` */
export const overviewQuerySchema = z.object({ range: rangeSchema.default("1h") });
/** `GET /api/handlers?refresh=1&mode=estimate` */
export const handlersQuerySchema = z.object({
  refresh: flag.default(false),
  /** Force a sampled estimate even below `INSPECT_EXACT_MAX_KEYS`. */
  mode: z.enum(["exact", "estimate", "auto"]).default("auto"),
});
/** `GET /api/series?metric=&service=&handler=&range=&step=` (step in seconds, chosen from range when absent). */
export const seriesQuerySchema = z.object({
  metric: seriesMetricSchema,
  service: nameParam.optional(),
  handler: nameParam.optional(),
  range: rangeSchema.default("1h"),
  step: z.coerce.number().int("expected whole seconds").min(1, "expected ≥ 1 s").max(86_400, "expected ≤ 86400 s").optional(),
});
/** `GET /api/keys?prefix=&cursor=&count=`; `prefix` is the literal handler prefix (no glob). */
export const keysQuerySchema = z.object({
  prefix: z.string().min(1, "expected a handler prefix such as notification:dedup:on-review-created").max(512).regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters"),
  cursor: z.string().max(4096).regex(/^[A-Za-z0-9_.:@|\-]*$/, "expected a cursor returned by a previous page").optional(),
  count: z.coerce.number().int("expected a whole number").min(1, "expected ≥ 1").max(500, "expected ≤ 500").default(100),
  /** Only keys in this state (`processing`: the leases — stuck ones among them); a page may then hold fewer keys. */
  state: keyStateSchema.optional(),
});
/**
 * `GET /api/keys/lookup?uuid=&prefix=`: `uuid` is a ULID (any case; looked up upper-case), a UUID,
 * or a whole key `<service>:dedup:<handler>:<id>` as `redis-cli --scan` prints it (its prefix then
 * replaces `prefix`); see `lib/lookup-input.ts`. `prefix`, optional, is one more handler prefix to
 * check (the one the key browser shows), for a prefix newer than the last inspection. It is checked
 * against `DEDUP_PREFIXES` like the others.
 */
export const keyLookupQuerySchema = z
  .object({
    uuid: z
      .string()
      .max(600, "expected a message id or one dedup key")
      .transform((s, ctx) => {
        const p = parseLookupInput(s);
        if (!p.ok) ctx.addIssue({ code: "custom", message: p.error });
        return p;
      }),
    prefix: keysQuerySchema.shape.prefix.optional(),
  })
  .transform(({ uuid, prefix }) => (uuid.ok ? { uuid: uuid.id, prefix: uuid.prefix ?? prefix } : { uuid: "", prefix }));
