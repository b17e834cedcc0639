/**
 * The one source of the documented dedup-health thresholds (spec §3, §7, §8).
 *
 * Isomorphic: no Node imports, so the dashboard UI, the backend (embedded alert state), the
 * generated Prometheus rule file and the generated Grafana dashboard all read the same numbers.
 * `infra/prometheus/rules/dedup.yml` and `infra/grafana/dedup-health.json` are generated from this
 * file by `npm run gen:infra`; a test fails when they drift.
 */
import {
  DAY_MS,
  DEDUP_ERROR_REASON,
  DEDUP_ERROR_REASONS,
  HOUR_MS,
  METRIC_NAMES as LIBRARY_METRIC_NAMES,
  MINUTE_MS,
  PROCESSED_RESULTS,
  TTL_POLICY,
  type DedupErrorReason,
  type ProcessedResult,
  type TtlClass,
} from "@/names/dedup";

export { DAY_MS, HOUR_MS, MINUTE_MS, TTL_POLICY, PROCESSED_RESULTS, type ProcessedResult, type TtlClass };

/**
 * The four metric names of spec §7, as the library writes them (`names/dedup.ts`, which imports
 * nothing, so the browser bundle reads them too). **Renaming one breaks every SRE's rules and dashboards.**
 */
export const METRIC_NAMES = {
  /** Counter `{service, topic, handler}`: messages swallowed as duplicates. */
  deduplicated: LIBRARY_METRIC_NAMES.deduplicated,
  /** Counter `{service, topic, handler, result}`: every message the Deduplicator saw, by outcome. */
  processed: LIBRARY_METRIC_NAMES.processed,
  /** Histogram `{service}`: duration of one Redis check (seconds). */
  checkDuration: LIBRARY_METRIC_NAMES.checkDuration,
  /** Counter `{service, reason}`: failed checks. */
  errors: LIBRARY_METRIC_NAMES.errors,
} as const;

/** One of the four metric names of spec §7. */
export type MetricName = (typeof METRIC_NAMES)[keyof typeof METRIC_NAMES];

/** Label names per metric (spec §7). */
export const METRIC_LABELS = {
  [METRIC_NAMES.deduplicated]: ["service", "topic", "handler"],
  [METRIC_NAMES.processed]: ["service", "topic", "handler", "result"],
  [METRIC_NAMES.checkDuration]: ["service"],
  [METRIC_NAMES.errors]: ["service", "reason"],
} as const satisfies Record<MetricName, readonly string[]>;

/** Values of the `reason` label of `deduplication_errors_total` (the library's, in its order). */
export const ERROR_REASONS = DEDUP_ERROR_REASONS;
/** One `reason` label value. */
export type ErrorReason = DedupErrorReason;

/**
 * What a `reason` of {@link METRIC_NAMES.errors} means, in two classes: `marshal` is a publisher's
 * record without a usable `_watermill_message_uuid` (it goes to the DLQ, Redis is not involved);
 * `redis` (`redis_timeout`, `redis_conn`) is a failing Redis, whose effect depends on the handler's
 * failure mode.
 */
export type ErrorReasonClass = "marshal" | "redis";

/** The class of an error `reason` label value: `marshal`, else `redis`. */
export function errorReasonClass(reason: string): ErrorReasonClass {
  return reason === DEDUP_ERROR_REASON.marshal ? "marshal" : "redis";
}

/**
 * Annotation texts of {@link ALERT_NAMES.redisErrors} per reason class, in Prometheus template
 * notation (`{{ $labels.x }}`, `{{ $value }}`). The rule file selects one with
 * `{{ if eq $labels.reason "marshal" }}`; the embedded evaluator fills in the labels.
 * **A `marshal` error is a publisher bug, not a Redis incident**: its text must not say otherwise.
 */
export const ERROR_REASON_TEXT: Record<ErrorReasonClass, { readonly summary: string; readonly description: string }> = {
  marshal: {
    summary: "Records without a message UUID reaching {{ $labels.service }}: a publisher bug, sent to the DLQ",
    description:
      '{{ $value | printf "%.3g" }} records per second reaching service {{ $labels.service }} over the last 5 minutes ' +
      "had no usable message UUID (reason marshal: no _watermill_message_uuid header, or the key factory failed). " +
      "A publisher bug, not Redis: such a record cannot be deduplicated, so the consumer sends it to the dead-letter " +
      "topic (reason_poisoned marshal) without running a handler. Find the publisher of the topic named in " +
      "topic_poisoned on the DLQ record, make it set the UUID, then re-publish those records with one.",
  },
  redis: {
    summary: "Dedup checks failing on {{ $labels.service }}: Redis {{ $labels.reason }}",
    description:
      '{{ $value | printf "%.3g" }} dedup checks per second on service {{ $labels.service }} failed against Redis ' +
      "with reason {{ $labels.reason }} over the last 5 minutes. Fail-open handlers let these messages through " +
      "unchecked (duplicates can reach them); fail-closed handlers retry them and then send them to the DLQ.",
  },
};

/** Rate window of every alert expression (spec §8: "over 5 min"). */
export const RATE_WINDOW = "5m";
/** {@link RATE_WINDOW} in milliseconds, for the embedded (non-Prometheus) evaluation. */
export const RATE_WINDOW_MS = 5 * MINUTE_MS;

/** Alert names, exactly as the rule file and `ALERTS{alertname}` carry them. */
export const ALERT_NAMES = {
  duplicateRate: "DedupDuplicateRateHigh",
  redisErrors: "DedupRedisErrors",
  redisLatency: "DedupRedisLatencyHigh",
} as const;

/** One of the three alert names. */
export type AlertName = (typeof ALERT_NAMES)[keyof typeof ALERT_NAMES];

/** Key of one alert in {@link ALERTS}. */
export type AlertKey = keyof typeof ALERT_NAMES;

/** A value a chart draws as a horizontal line, with the text shown next to it. */
export interface ThresholdLine {
  /** In the alert's {@link AlertThreshold.unit} (ratio 0..1, errors per second, seconds). */
  readonly value: number;
  /** Short human label for a chart legend or tooltip, e.g. "10% alert". */
  readonly label: string;
}

/** Everything one alert of spec §8 needs: the rule file, the dashboard and the embedded evaluator. */
export interface AlertThreshold {
  /** Alert name (`alertname` label). */
  readonly name: AlertName;
  /** One-line meaning, for a UI tooltip. */
  readonly title: string;
  /** The alert fires when the value is strictly above this. */
  readonly threshold: ThresholdLine;
  /** The level seen on a healthy system, when the spec documents one; `null` otherwise. */
  readonly normal: ThresholdLine | null;
  /** What the value measures: `ratio` (0..1), `per_second` (events/s) or `seconds`. */
  readonly unit: "ratio" | "per_second" | "seconds";
  /** Labels the alert is evaluated per (one alert instance per combination). */
  readonly by: readonly string[];
  /** How long the condition must hold before the alert fires, Prometheus notation. */
  readonly for: `${number}m`;
  /** {@link AlertThreshold.for} in milliseconds. */
  readonly forMs: number;
  /** Value of the `severity` label. */
  readonly severity: "ticket";
  /** PromQL of the value alone (no comparison), one series per {@link AlertThreshold.by} combination. */
  readonly valueExpr: string;
  /** PromQL of the alert: `valueExpr > threshold`. */
  readonly expr: string;
  /** Anchor of the alert's section in RUNBOOK.md (GitHub heading slug). */
  readonly runbookAnchor: string;
  /** Absolute URL of that section; the rule's `runbook_url` annotation. */
  readonly runbookUrl: string;
}

/** Where RUNBOOK.md is published; `runbook_url` annotations point at its sections. */
export const RUNBOOK_BASE_URL = "https://github.com/dedup-health/dedup-health/blob/main/RUNBOOK.md";

const DUPLICATE_BY = ["service", "topic", "handler"] as const;
const ERRORS_BY = ["service", "reason"] as const;
const LATENCY_BY = ["service"] as const;

/**
 * PromQL of the duplicate ratio: deduplicated / processed over {@link RATE_WINDOW}.
 * `matchers` (e.g. `service=~"$service"`) is inserted into both selectors as is.
 * **Never pass user input here**: it is PromQL text, not a value.
 * A handler with no traffic yields no series (0/0 is NaN, which no comparison matches).
 */
export function duplicateRatioExpr(matchers = "", by: readonly string[] = DUPLICATE_BY): string {
  const sel = matchers ? `{${matchers}}` : "";
  const grp = by.join(", ");
  return (
    `sum by (${grp}) (rate(${METRIC_NAMES.deduplicated}${sel}[${RATE_WINDOW}]))` +
    ` / sum by (${grp}) (rate(${METRIC_NAMES.processed}${sel}[${RATE_WINDOW}]))`
  );
}

/** PromQL of the dedup error rate (errors/s) per `by` labels. Same `matchers` hazard as {@link duplicateRatioExpr}. */
export function errorRateExpr(matchers = "", by: readonly string[] = ERRORS_BY): string {
  const sel = matchers ? `{${matchers}}` : "";
  return `sum by (${by.join(", ")}) (rate(${METRIC_NAMES.errors}${sel}[${RATE_WINDOW}]))`;
}

/**
 * PromQL of a quantile of the Redis check duration (seconds), per `by` labels — the valid
 * histogram form of spec §8 (the note's `histogram_quantile(0.99, <histogram>)` is not PromQL).
 * Same `matchers` hazard as {@link duplicateRatioExpr}.
 */
export function checkQuantileExpr(q = 0.99, matchers = "", by: readonly string[] = LATENCY_BY): string {
  const sel = matchers ? `{${matchers}}` : "";
  const grp = ["le", ...by].join(", ");
  return `histogram_quantile(${q}, sum by (${grp}) (rate(${METRIC_NAMES.checkDuration}_bucket${sel}[${RATE_WINDOW}])))`;
}

function anchor(name: AlertName): string {
  // GitHub's slug of a heading that is just the alert name: lower case, nothing else changes.
  return name.toLowerCase();
}

type Derived = "expr" | "runbookAnchor" | "runbookUrl" | "forMs";

function alert<const A extends Omit<AlertThreshold, Derived>>(a: A): A & Pick<AlertThreshold, Derived> {
  return {
    ...a,
    forMs: Number(a.for.slice(0, -1)) * MINUTE_MS,
    expr: `${a.valueExpr} > ${a.threshold.value}`,
    runbookAnchor: anchor(a.name),
    runbookUrl: `${RUNBOOK_BASE_URL}#${anchor(a.name)}`,
  };
}

/**
 * The three alerts of spec §8.
 *
 * `for` durations: spec §8 fixes 10 min for the duplicate rate only. For the other two we chose
 * short holds so an outage tickets quickly but one scrape glitch does not: errors 1 min (a single
 * error keeps a 5-min rate above 0 for ~5 min, so it still fires), latency 5 min (one rate window).
 */
export const ALERTS = {
  duplicateRate: alert({
    name: ALERT_NAMES.duplicateRate,
    title: "Duplicate ratio (deduplicated / processed) over 5 min",
    threshold: { value: 0.1, label: "10% alert" },
    normal: { value: 0.01, label: "< 1% normal" },
    unit: "ratio",
    by: DUPLICATE_BY,
    for: "10m",
    severity: "ticket",
    valueExpr: duplicateRatioExpr(),
  }),
  redisErrors: alert({
    name: ALERT_NAMES.redisErrors,
    title: "Dedup errors over 5 min: Redis timeout or connection, or a record without a UUID (marshal)",
    threshold: { value: 0, label: "> 0 errors/s" },
    normal: { value: 0, label: "0 normal" },
    unit: "per_second",
    by: ERRORS_BY,
    for: "1m",
    severity: "ticket",
    valueExpr: errorRateExpr(),
  }),
  redisLatency: alert({
    name: ALERT_NAMES.redisLatency,
    title: "Redis dedup check p99 over 5 min",
    threshold: { value: 0.05, label: "50 ms" },
    normal: null,
    unit: "seconds",
    by: LATENCY_BY,
    for: "5m",
    severity: "ticket",
    valueExpr: checkQuantileExpr(0.99),
  }),
} as const satisfies Record<AlertKey, AlertThreshold>;

/** The alerts in a stable order (duplicate rate, errors, latency). */
export const ALERT_LIST: readonly AlertThreshold[] = [ALERTS.duplicateRate, ALERTS.redisErrors, ALERTS.redisLatency];

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
