/**
 * The PromQL of the alerts' values, written once: the alert entries (`lib/thresholds.ts`), the named
 * queries (`lib/named-queries.ts`) and the Grafana dashboard use these. Isomorphic: no
 * Node imports. **Every `matchers` argument is PromQL text, never user input.**
 */
import { METRIC_LABELS, METRIC_NAMES, PAYLOAD_CONFLICT_GROUP } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { MINUTE_MS } from "@/names/keys";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { OBSERVE_METRIC_LABELS, OBSERVE_METRIC_NAMES } from "@/names/observe";

/** Rate window of every alert expression (spec §8: "over 5 min"). */
export const RATE_WINDOW = "5m";
/** {@link RATE_WINDOW} in milliseconds, for the embedded (non-Prometheus) evaluation. */
export const RATE_WINDOW_MS = 5 * MINUTE_MS;

/**
 * A rate's window: `rate` over the alert's 5 min, or "now" — `irate`, the per-second change
 * between the last two samples within {@link NOW_LOOKBACK} (with a 5 s scrape, the last 5 s).
 */
export interface RateWindow {
  fn: "rate" | "irate";
  range: string;
}

/** The alerts' window (spec §8): `rate(…[5m])`. */
export const ALERT_WINDOW: RateWindow = { fn: "rate", range: RATE_WINDOW };

/**
 * How far back "now" looks for its last two samples: a minute covers any scrape interval up to
 * 30 s; with none in it (app down, scrapes failing) "now" has no value, never a stale one.
 */
export const NOW_LOOKBACK = "1m";
/** {@link NOW_LOOKBACK} in milliseconds, for the embedded evaluation. */
export const NOW_LOOKBACK_MS = MINUTE_MS;

/**
 * "Now", the one definition every "now" figure uses: the last scrape interval (`irate` over
 * {@link NOW_LOOKBACK}). After a fault ends it is clean from the second scrape after the end (the
 * first pairs a sample from before the end) — the 5-min window then still breaches for up to 5 min.
 * Whether the fault is over ("recovering") is decided from the quiet since the last bad check
 * instead (lib/now-state, docs/UI.md "Over at one scrape").
 */
export const NOW_WINDOW: RateWindow = { fn: "irate", range: NOW_LOOKBACK };

const DUPLICATE_BY = METRIC_LABELS.deduplicated;
const ERRORS_BY = METRIC_LABELS.errors;
const LATENCY_BY = METRIC_LABELS.checkDuration;

/**
 * PromQL of the duplicate ratio: deduplicated / processed over {@link RATE_WINDOW}.
 * `matchers` (e.g. `service=~"$service"`) is inserted into both selectors as is.
 * **Never pass user input here**: it is PromQL text, not a value.
 * A handler with no traffic yields no series (0/0 is NaN, which no comparison matches).
 */
export function duplicateRatioExpr(
  matchers = "",
  by: readonly string[] = DUPLICATE_BY,
  w: RateWindow = ALERT_WINDOW,
): string {
  const sel = matchers ? `{${matchers}}` : "";
  const grp = by.join(", ");
  return (
    `sum by (${grp}) (${w.fn}(${METRIC_NAMES.deduplicated}${sel}[${w.range}]))` +
    ` / sum by (${grp}) (${w.fn}(${METRIC_NAMES.processed}${sel}[${w.range}]))`
  );
}

/** PromQL of the dedup error rate (errors/s) per `by` labels. Same `matchers` hazard as {@link duplicateRatioExpr}. */
export function errorRateExpr(matchers = "", by: readonly string[] = ERRORS_BY, w: RateWindow = ALERT_WINDOW): string {
  const sel = matchers ? `{${matchers}}` : "";
  return `sum by (${by.join(", ")}) (${w.fn}(${METRIC_NAMES.errors}${sel}[${w.range}]))`;
}

/**
 * PromQL of a quantile of the Redis check duration (seconds), per `by` labels — the valid
 * histogram form of spec §8 (the note's `histogram_quantile(0.99, <histogram>)` is not PromQL).
 * Same `matchers` hazard as {@link duplicateRatioExpr}.
 */
export function checkQuantileExpr(
  q = 0.99,
  matchers = "",
  by: readonly string[] = LATENCY_BY,
  w: RateWindow = ALERT_WINDOW,
): string {
  const sel = matchers ? `{${matchers}}` : "";
  const grp = ["le", ...by].join(", ");
  return `histogram_quantile(${q}, sum by (${grp}) (${w.fn}(${METRIC_NAMES.checkDuration}_bucket${sel}[${w.range}])))`;
}

/**
 * PromQL of the rate (events/s over {@link RATE_WINDOW}) of one of the Deduplicator's per-handler
 * lease counters (`leaseLost`, `inProgress`, `released`), per service, topic and handler.
 */
export function leaseCounterRateExpr(counter: "leaseLost" | "inProgress" | "released"): string {
  return `sum by (${METRIC_LABELS[counter].join(", ")}) (rate(${METRIC_NAMES[counter]}[${RATE_WINDOW}]))`;
}

/**
 * PromQL of the payload conflicts (copies whose UUID was processed with another payload) counted
 * over {@link RATE_WINDOW}, per service and handler. Same `matchers` hazard as {@link duplicateRatioExpr}.
 */
export function payloadConflictsExpr(matchers = "", by: readonly string[] = PAYLOAD_CONFLICT_GROUP): string {
  const sel = matchers ? `{${matchers}}` : "";
  return `sum by (${by.join(", ")}) (increase(${METRIC_NAMES.payloadConflicts}${sel}[${RATE_WINDOW}]))`;
}

/**
 * `inner` (series with a `consumergroup` label) per `service`, `handler` and `topic`, the first two
 * taken from the group id as this app names its groups (`<service>.<handler>`). `max`, not `sum`:
 * every replica exports the same group's figures (read from Kafka's admin API).
 */
function perHandlerGroup(inner: string): string {
  return (
    `max by (service, handler, topic) (label_replace(label_replace(${inner}, ` +
    `"service", "$1", "consumergroup", "([^.]+)\\\\..+"), "handler", "$1", "consumergroup", "[^.]+\\\\.(.+)"))`
  );
}

/** PromQL of the lag (messages not consumed) of each `<service>.<handler>` consumer group, by topic. */
export function consumerLagExpr(): string {
  return perHandlerGroup(`sum by (consumergroup, topic, instance) (${KAFKA_METRIC_NAMES.lag})`);
}

/** Window over which the lag's slope is fitted: long enough that a batch consumer's sawtooth averages out. */
export const LAG_GROWTH_WINDOW = "10m";
/** {@link LAG_GROWTH_WINDOW} in milliseconds, for the embedded evaluation. */
export const LAG_GROWTH_WINDOW_MS = 10 * MINUTE_MS;
/** Lag (messages) below which a growing lag is not reported: a few messages in flight are normal. */
export const LAG_GROWTH_FLOOR = 100;

/**
 * PromQL of how fast a consumer group's lag grows (messages/s): the least-squares slope
 * (`deriv`) of `kafka_consumergroup_lag_sum` over {@link LAG_GROWTH_WINDOW}, only where the lag is
 * above {@link LAG_GROWTH_FLOOR}, per `service`, `handler`, `topic`. Positive: the group falls
 * behind (stopped, stuck or slower than the producers); 0 or negative: it keeps up or catches up.
 */
export function consumerLagGrowthExpr(): string {
  const sum = KAFKA_METRIC_NAMES.lagSum;
  return perHandlerGroup(`deriv(${sum}[${LAG_GROWTH_WINDOW}]) and ${sum} > ${LAG_GROWTH_FLOOR}`);
}

/**
 * PromQL of the share of a handler's dedup keys lost at once (Redis restarted empty, flushed or
 * failed over), per service and handler: the dashboard's held gauge, over 1 min so that one failed
 * scrape does not resolve the alert for an evaluation.
 */
export function memoryLostExpr(): string {
  return `max by (${OBSERVE_METRIC_LABELS.memoryLost.join(", ")}) (max_over_time(${OBSERVE_METRIC_NAMES.memoryLost}[1m]))`;
}

/**
 * PromQL of the age (seconds) of the oldest open DLQ record per consumer topic: the dashboard's
 * gauge, over 1 min so that one failed scrape does not reset the alert's 10-minute hold.
 */
export function dlqOldestOpenAgeExpr(): string {
  return `max by (${OBSERVE_METRIC_LABELS.dlqOldestOpenAge.join(", ")}) (max_over_time(${OBSERVE_METRIC_NAMES.dlqOldestOpenAge}[1m]))`;
}

/** How far back a deadman rule remembers what it has seen exporting: a service gone longer is forgotten. */
export const DEADMAN_MEMORY = "1d";
/**
 * Resolution of "last seen" in a deadman rule (its subquery step), in seconds. A group is known present
 * only at the steps: it was last really seen somewhere between its last present step and the next, so
 * the rule counts its silence from that next step, and reports the least it can have been (never more).
 */
export const DEADMAN_STEP_SECONDS = 60;
/** {@link DEADMAN_STEP_SECONDS} as the subquery's step. */
export const DEADMAN_STEP = `${DEADMAN_STEP_SECONDS}s`;

/**
 * PromQL of how long (seconds) each `by` group of `selector` has been gone, for groups seen within
 * {@link DEADMAN_MEMORY} and absent now; no series for a group present now or never seen. "Seen
 * before, now gone" is what `absent()` cannot say per group (it knows no label it was not given):
 * one step after the newest subquery step at which the group existed, against `time()` (so it never
 * fires before its threshold; it may fire up to a step later). A killed or unreachable
 * target is gone at once (Prometheus marks its series stale at the failed scrape). Parenthesized:
 * the alert appends `> threshold`, which binds tighter than `unless`, `and` and `or`.
 */
export function goneForExpr(selector: string, by: string): string {
  const present = `group by (${by}) (${selector})`;
  return `((time() - ${DEADMAN_STEP_SECONDS} - max by (${by}) (max_over_time(timestamp(${present})[${DEADMAN_MEMORY}:${DEADMAN_STEP}]))) unless on (${by}) ${present})`;
}

/**
 * PromQL of how long each consumer service has not exported its dedup metrics: neither its
 * self-description (`dedup_handler_info`) nor its checks histogram (spec §7: a service that is not
 * ours exports this one only), per `service`, for services seen within {@link DEADMAN_MEMORY}.
 */
export function consumerGoneExpr(): string {
  return goneForExpr(
    `${HANDLER_INFO_METRIC}{service!=""} or ${METRIC_NAMES.checkDuration}_count{service!=""}`,
    "service",
  );
}

/**
 * The `job` under which Prometheus scrapes the dashboard (infra/prometheus/prometheus.yml). The
 * dashboard-down rule names it: **a deployment that scrapes the app under another job name must
 * rename this one and run `npm run gen:infra`**, or the rule sees the job absent and fires.
 */
export const DASHBOARD_SCRAPE_JOB = "dedup-health";

/**
 * PromQL of the share (0..1) of the dashboard's scrape targets that are down, per `job`; 1 when
 * Prometheus has no such target at all (removed from its configuration or service discovery).
 */
export function dashboardDownExpr(job: string = DASHBOARD_SCRAPE_JOB): string {
  const up = `up{job="${job}"}`;
  return `(avg by (job) (1 - ${up}) or absent(${up}))`;
}

/**
 * PromQL of how long (seconds) the dashboard's scrape-time gauges (the inputs of `DedupMemoryLost`
 * and `DedupDlqBacklogStale`, exported by the fleet's leader only) have been missing, per `job`,
 * while a target of that job is up: a leader that stopped exporting, or no leader. When every
 * target is down, the dashboard-down rule speaks instead.
 */
export function fleetGaugesGoneExpr(): string {
  const gauges = `${OBSERVE_METRIC_NAMES.memoryLost}{job!=""} or ${OBSERVE_METRIC_NAMES.dlqOldestOpenAge}{job!=""}`;
  return `(${goneForExpr(gauges, "job")} and on (job) (max by (job) (up) == 1))`;
}
