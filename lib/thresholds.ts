/**
 * The one source of the documented dedup-health thresholds (spec §3, §7, §8).
 *
 * Isomorphic: no Node imports, so the dashboard UI, the backend (embedded alert state), the
 * generated Prometheus rule file and the generated Grafana dashboard all read the same numbers.
 * `infra/prometheus/rules/dedup.yml` and `infra/grafana/dedup-health.json` are generated from this
 * file by `npm run gen:infra`; a test fails when they drift.
 */
import { DEDUP_ERROR_REASON, METRIC_LABELS, PAYLOAD_CONFLICT_GROUP, SLOW_CHECK_SECONDS } from "@/names/dedup";
import { DAY_MS } from "@/names/keys";
import { anyOccurrenceAlert, defineAlert, type AlertThreshold, type ThresholdLine } from "@/lib/alert-model";
import { LAG_GROWTH_FLOOR, LAG_GROWTH_WINDOW } from "@/lib/alert-exprs";
import { OBSERVE_METRIC_LABELS } from "@/names/observe";
import { DEADMAN_ALERTS } from "@/lib/deadman-alerts";

/**
 * What a `reason` of `deduplication_errors_total` means, in two classes: `marshal` is a publisher's
 * record without a usable `_watermill_message_uuid` (it goes to the DLQ, Redis is not involved);
 * `redis` (`redis_timeout`, `redis_conn`) is a failing Redis, whose effect depends on the handler's
 * failure mode.
 */
export type ErrorReasonClass = "marshal" | "redis";

/** The class of an error `reason` label value: `marshal`, else `redis`. */
export function errorReasonClass(reason: string): ErrorReasonClass {
  return reason === DEDUP_ERROR_REASON.marshal ? "marshal" : "redis";
}

/** The latency alert's threshold in ms, for its texts. */
const SLOW_MS = Math.round(SLOW_CHECK_SECONDS * 1000);
const pct = (ratio: number) => `${Math.round(ratio * 1000) / 10}%`;
const HANDLER_PAGE = "/handlers/{{ $labels.service }}/{{ $labels.handler }}";
const SERVICE_PAGE = "/?service={{ $labels.service }}";

/**
 * Every alert, each one entry (spec §8's three first). To add one: an entry here naming the query of
 * its value (its PromQL is that query's; a new query is one entry in `lib/named-queries.ts` plus its
 * embedded evaluation in `server/observe/metrics/local-eval.ts`), its promtool cases and its
 * RUNBOOK.md section; `npm run gen:infra` writes the rest (docs/ARCHITECTURE.md "How to add an
 * alert"). Forgetting one of them fails a type check or a test.
 *
 * `for` durations: spec §8 fixes 10 min for the duplicate rate only. For the other two we chose
 * short holds so an outage tickets quickly but one scrape glitch does not: errors 1 min (a single
 * error keeps a 5-min rate above 0 for ~5 min, so it still fires), latency 5 min (one rate window).
 * The error texts depend on the reason: **a `marshal` error is a publisher bug, not a Redis
 * incident**, and its text must not say otherwise. The error rate prints with `printf "%.3g"`, not
 * `humanize`: humanize prints 0.01/s as "10m", which reads as minutes.
 */
export const ALERTS = {
  duplicateRate: defineAlert({
    name: "DedupDuplicateRateHigh",
    title: "Duplicate ratio (deduplicated / processed) over 5 min",
    query: "duplicate_ratio",
    threshold: { value: 0.1, label: "10% alert" },
    normal: { value: 0.01, label: "< 1% normal" },
    unit: "ratio",
    by: METRIC_LABELS.deduplicated,
    for: "10m",
    severity: "ticket",
    texts: {
      summary: `Duplicate ratio above ${pct(0.1)} for {{ $labels.service }}/{{ $labels.handler }}`,
      description:
        `{{ $value | humanizePercentage }} of the messages on topic {{ $labels.topic }} reaching handler ` +
        `{{ $labels.handler }} of service {{ $labels.service }} were duplicates over the last 5 minutes ` +
        `(alert above ${pct(0.1)} for 10m; normal is below ${pct(0.01)}). ` +
        `An upstream publisher or outbox forwarder is likely re-publishing systematically.`,
    },
    dashboardPath: HANDLER_PAGE,
  }),
  redisErrors: defineAlert({
    name: "DedupRedisErrors",
    title: "Dedup errors over 5 min: Redis timeout or connection, or a record without a UUID (marshal)",
    query: "error_rate",
    threshold: { value: 0, label: "> 0 errors/s" },
    normal: { value: 0, label: "0 normal" },
    unit: "per_second",
    by: METRIC_LABELS.errors,
    for: "1m",
    severity: "ticket",
    texts: {
      summary: "Dedup checks failing on {{ $labels.service }}: {{ $labels.reason }} (Redis or the consumer)",
      description:
        '{{ $value | printf "%.3g" }} dedup checks per second on service {{ $labels.service }} failed ' +
        "with reason {{ $labels.reason }} over the last 5 minutes: Redis or the consumer (a check times out as well " +
        "when the consumer's CPU or runtime stalls; see the latency split on the handler page before touching Redis). " +
        "Fail-open handlers let these messages through " +
        "unchecked (duplicates can reach them); fail-closed handlers retry them and then send them to the DLQ.",
    },
    variants: [
      {
        label: "reason",
        equals: DEDUP_ERROR_REASON.marshal,
        texts: {
          summary: "Records without a message UUID reaching {{ $labels.service }}: a publisher bug, sent to the DLQ",
          description:
            '{{ $value | printf "%.3g" }} records per second reaching service {{ $labels.service }} over the last 5 minutes ' +
            "had no usable message UUID (reason marshal: no _watermill_message_uuid header, or the key factory failed). " +
            "A publisher bug, not Redis: such a record cannot be deduplicated, so the consumer sends it to the dead-letter " +
            "topic (reason_poisoned marshal) without running a handler. Find the publisher of the topic named in " +
            "topic_poisoned on the DLQ record, make it set the UUID, then re-publish those records with one.",
        },
      },
    ],
    dashboardPath: SERVICE_PAGE,
  }),
  redisLatency: defineAlert({
    name: "DedupRedisLatencyHigh",
    title: "Dedup check p99 over 5 min, measured in the consumer",
    query: "check_p99",
    threshold: { value: SLOW_CHECK_SECONDS, label: `${SLOW_MS} ms` },
    normal: null,
    unit: "seconds",
    by: METRIC_LABELS.checkDuration,
    for: "5m",
    severity: "ticket",
    texts: {
      summary: `Dedup check p99 above ${SLOW_MS}ms on {{ $labels.service }} (measured in the consumer: Redis or the consumer)`,
      description:
        "p99 of the dedup check on service {{ $labels.service }} is {{ $value | humanizeDuration }} " +
        `over the last 5 minutes (alert above ${SLOW_MS}ms for 5m), timed in the consumer: Redis or the consumer. ` +
        "If the consumer's runtime stall (Node event-loop p99, JVM GC pause, Go scheduler latency) is close to it, " +
        "the consumer is saturated; if Redis' own time per call (dedup_redis_command_usec_per_call) is, Redis is slow; " +
        "if neither is, it is unexplained (queueing in Redis behind other commands? check SLOWLOG). Every consumed " +
        "message waits for this check; slow checks also end in timeouts, which count as dedup errors.",
    },
    dashboardPath: SERVICE_PAGE,
  }),
  // At once: each increase is a message that may have been processed twice.
  leaseLost: anyOccurrenceAlert(
    {
      name: "DedupLeaseLost",
      title: "Successful runs whose dedup lease had been taken over (a message may have run twice), over 5 min",
      query: "lease_lost_rate",
      unit: "per_second",
      by: METRIC_LABELS.leaseLost,
      severity: "page",
      texts: {
        summary: "Lease lost on {{ $labels.service }}/{{ $labels.handler }}: a message may have been processed twice",
        description:
          "Handler {{ $labels.handler }} of service {{ $labels.service }} (topic {{ $labels.topic }}) finished " +
          '{{ $value | printf "%.3g" }} runs per second over the last 5 minutes after its dedup lease (leaseMs) had expired ' +
          "and another consumer had claimed the same message: each such message may have been processed twice, and only " +
          "the handler's own idempotency absorbs the second run. The handler outlives its lease: compare its handler time " +
          "p99 with leaseMs on the handler page.",
      },
      dashboardPath: HANDLER_PAGE,
    },
    "any lease lost",
  ),
  payloadConflict: anyOccurrenceAlert(
    {
      name: "DedupPayloadConflict",
      title: "Message UUIDs reused with another payload (payload conflicts) over 5 min",
      query: "payload_conflicts",
      unit: "count",
      by: PAYLOAD_CONFLICT_GROUP,
      severity: "ticket",
      texts: {
        summary: "A publisher reuses message UUIDs: payload conflicts on {{ $labels.service }}/{{ $labels.handler }}",
        description:
          '{{ $value | printf "%.3g" }} payload conflict(s) on handler {{ $labels.handler }} of service {{ $labels.service }} ' +
          "over the last 5 minutes: messages whose UUID had already been processed with another payload. " +
          "A publisher bug: swallowing such a copy as a duplicate loses that message. With onPayloadConflict " +
          '"poison" (the default) the copy is in the dead-letter topic with reason_poisoned payload_conflict; find its ' +
          "publisher (topic_poisoned), make it generate a new UUID per message, and re-publish the DLQ copies with new UUIDs.",
      },
      dashboardPath: HANDLER_PAGE,
    },
    "> 0 conflicts",
  ),
  consumerLagGrowing: defineAlert({
    name: "DedupConsumerLagGrowing",
    title: `Consumer-group lag growing: its slope over ${LAG_GROWTH_WINDOW} (messages/s), where the lag is above ${LAG_GROWTH_FLOOR}`,
    query: "consumer_lag_growth",
    threshold: { value: 0, label: "lag growing" },
    normal: null,
    unit: "per_second",
    by: ["service", "handler", "topic"],
    // A slope held for 10 more minutes: a stopped or stuck consumer, not a burst it absorbs.
    for: "10m",
    severity: "ticket",
    texts: {
      summary: "Consumer lag of {{ $labels.service }}/{{ $labels.handler }} keeps growing on {{ $labels.topic }}",
      description:
        "The lag of consumer group {{ $labels.service }}.{{ $labels.handler }} on topic {{ $labels.topic }} grew by " +
        `{{ $value | printf "%.3g" }} messages per second over the last ${LAG_GROWTH_WINDOW} and is above ${LAG_GROWTH_FLOOR} messages, ` +
        "for 10 minutes: the handler's consumers are stopped, stuck or slower than the producers, and every message waits " +
        "longer. Look at the group's members and the handler's errors, time and leases on the handler page.",
    },
    dashboardPath: HANDLER_PAGE,
  }),
  memoryLost: defineAlert({
    name: "DedupMemoryLost",
    title: "Share of a handler's dedup keys lost at once (Redis restarted empty, flushed or failed over), held 30 min",
    query: "memory_lost",
    threshold: { value: 0.2, label: "20% of the keys lost" },
    normal: { value: 0, label: "0 normal" },
    unit: "ratio",
    by: OBSERVE_METRIC_LABELS.memoryLost,
    // At once: the window's memory is already gone; the gauge holds the loss for 30 min.
    for: "0m",
    severity: "page",
    texts: {
      summary:
        "Dedup memory lost on {{ $labels.service }}/{{ $labels.handler }}: {{ $value | humanizePercentage }} of its keys gone",
      description:
        "{{ $value | humanizePercentage }} of the dedup keys of handler {{ $labels.handler }} (service {{ $labels.service }}) " +
        "disappeared at once, beyond what their TTLs explain: Redis restarted without persistence, was flushed, evicted " +
        "keys or failed over to an empty replica. Duplicates within the window will run again: every re-delivery, " +
        "re-publish or DLQ replay of a message processed before the loss reaches the handler a second time, until the " +
        "TTL window has passed. The dashboard shows the cause (restart, failover or a drop without either).",
    },
    dashboardPath: HANDLER_PAGE,
  }),
  // A ticket, not a page: an old open record is work left undone, not an outage. Held 10 min, so a re-drive under way clears it first.
  dlqBacklogStale: defineAlert({
    name: "DedupDlqBacklogStale",
    title: "Age of the oldest open DLQ record (neither re-driven nor discarded), per consumer topic",
    query: "dlq_oldest_open_age",
    threshold: { value: DAY_MS / 1000, label: "24 h" },
    normal: null,
    unit: "seconds",
    by: OBSERVE_METRIC_LABELS.dlqOldestOpenAge,
    for: "10m",
    severity: "ticket",
    texts: {
      summary: "A DLQ record of {{ $labels.topic }} has waited more than 24 h for a re-drive or a discard",
      description:
        "The oldest open record in the dead-letter topic of {{ $labels.topic }} was poisoned {{ $value | humanizeDuration }} ago and is neither re-driven nor discarded (alert above 24 h for 10m): nobody has decided what to do with it, and retention will delete it unseen. On the DLQ page (state open), fix the cause, then re-drive the records or discard them with a reason.",
    },
    dashboardPath: "/dlq?topic={{ $labels.topic }}.dlq",
  }),
  // The watchers watched: a silent consumer, the dashboard down, its leader's gauges missing (lib/deadman-alerts).
  ...DEADMAN_ALERTS,
} as const satisfies Record<string, AlertThreshold>;

/** Key of one alert in {@link ALERTS}. */
export type AlertKey = keyof typeof ALERTS;

/** Every alert, in a stable order: the one list every consumer loops over. */
export const ALERT_LIST: readonly AlertThreshold[] = Object.values(ALERTS);

/** Alert names by key, exactly as the rule file and `ALERTS{alertname}` carry them. */
export const ALERT_NAMES = Object.fromEntries(Object.entries(ALERTS).map(([k, a]) => [k, a.name])) as {
  readonly [K in AlertKey]: (typeof ALERTS)[K]["name"];
};

/** One alert name. */
export type AlertName = (typeof ALERTS)[AlertKey]["name"];

/** Shorthand values for charts: the lines the overview draws. */
export const THRESHOLDS = {
  /** Duplicate ratio above which {@link ALERT_NAMES.duplicateRate} goes pending (0.1 = 10%). */
  duplicateRatio: ALERTS.duplicateRate.threshold.value,
  /** Normal background duplicate ratio (below 0.01 = 1%). */
  duplicateRatioNormal: ALERTS.duplicateRate.normal.value,
  /** Dedup error rate (errors/s) above which {@link ALERT_NAMES.redisErrors} goes pending. */
  errorRate: ALERTS.redisErrors.threshold.value,
  /** Redis check p99 (seconds) above which {@link ALERT_NAMES.redisLatency} goes pending (50 ms). */
  checkP99Seconds: ALERTS.redisLatency.threshold.value,
} as const;

/** A line a chart draws across a series: the alert level or the normal level. */
export interface ChartLine extends ThresholdLine {
  /** `alert`: the alert goes pending above it; `normal`: a healthy system stays below it. */
  readonly kind: "alert" | "normal";
}

/**
 * The lines to draw on the chart of one alert's value: the alert threshold, and the normal level
 * when the spec documents one (duplicate ratio: 10% alert, < 1% normal). A threshold of 0 (errors)
 * is not drawn: it lies on the axis.
 */
export function chartLines(key: AlertKey): ChartLine[] {
  const a: AlertThreshold = ALERTS[key];
  const lines: ChartLine[] = [];
  if (a.threshold.value > 0) lines.push({ ...a.threshold, kind: "alert" });
  if (a.normal && a.normal.value > 0) lines.push({ ...a.normal, kind: "normal" });
  return lines;
}
