/**
 * The named queries the dashboard runs, each one entry: its name, the labels its series carry and
 * its PromQL. Isomorphic: an alert entry (`lib/thresholds.ts`) names the query of its value and takes
 * its PromQL from here; Prometheus runs {@link PROMQL}, and the embedded evaluator
 * (`server/observe/metrics/local-eval.ts`, `EVALUATE`, a record over {@link QueryName}: a new name
 * without an evaluation is a type error) computes the same over the app's registry.
 * **Never PromQL from a request**: a request picks a name.
 */
import { METRIC_LABELS, METRIC_NAMES, LABEL, PAYLOAD_CONFLICT_GROUP, PROCESSED_RESULT } from "@/names/dedup";
import { HANDLER_INFO_LABELS, HANDLER_INFO_METRIC } from "@/names/contract";
import {
  CONSUMER_INFO_METRIC,
  EVENTLOOP_P99_METRIC,
  OBSERVE_METRIC_LABELS,
  PROCESS_START_METRIC,
  REDIS_COMMAND_TIME_METRIC,
} from "@/names/observe";
import {
  checkQuantileExpr,
  consumerGoneExpr,
  consumerLagExpr,
  consumerLagGrowthExpr,
  dashboardDownExpr,
  dlqOldestOpenAgeExpr,
  duplicateRatioExpr,
  errorRateExpr,
  fleetGaugesGoneExpr,
  leaseCounterRateExpr,
  memoryLostExpr,
  NOW_WINDOW,
  payloadConflictsExpr,
  RATE_WINDOW,
} from "@/lib/alert-exprs";
import {
  declaredGroupLagExpr,
  DLQ_METRIC,
  DUPLICATES_BY_CAUSE_METRIC,
  HANDLER_P99_LINT_WINDOW,
  HANDLER_TIME_BY,
  handlerQuantileExpr,
  NOW_RATIO_BY,
  quietExpr,
  slowCheckRateExpr,
} from "@/lib/query-exprs";
import {
  EXPORTED_SIGNALS_EXPR,
  HOT_UUID_ERROR_BOUND_EXPR,
  HOT_UUIDS_EXPR,
  processStartExpr,
  runtimeLatencyExpr,
  SCRAPE_TIME_EXPR,
} from "@/lib/signal-queries";

/** One named query: what a request or an alert names, the labels of its series, the PromQL Prometheus runs. */
export interface NamedQuery {
  /** The name a request or an alert entry uses (snake_case). */
  readonly name: string;
  /** Labels each of its series carries (the library's from names/dedup `METRIC_LABELS`). */
  readonly by: readonly string[];
  /** Its PromQL; an alert's value is its query's PromQL (the alert appends `> threshold`). */
  readonly promql: string;
}

/** Every named query, one entry each: the one list a new query is added to (then its evaluation in `EVALUATE`). */
export const NAMED_QUERIES = [
  // The alert values (lib/thresholds) first; "now" beside each: the same expression over the last scrape interval (NOW_WINDOW).
  { name: "duplicate_ratio", by: METRIC_LABELS.deduplicated, promql: duplicateRatioExpr() },
  // Per handler, summed over topics: the tile beside the window's figure is the handler's.
  { name: "duplicate_ratio_now", by: NOW_RATIO_BY, promql: duplicateRatioExpr("", NOW_RATIO_BY, NOW_WINDOW) },
  {
    name: "processed_rate",
    by: METRIC_LABELS.processed,
    promql: `sum by (service, topic, handler, result) (rate(${METRIC_NAMES.processed}[${RATE_WINDOW}]))`,
  },
  {
    name: "new_rate",
    by: METRIC_LABELS.deduplicated,
    promql: `sum by (service, topic, handler) (rate(${METRIC_NAMES.processed}{result!="${PROCESSED_RESULT.deduplicated}"}[${RATE_WINDOW}]))`,
  },
  { name: "check_p50", by: METRIC_LABELS.checkDuration, promql: checkQuantileExpr(0.5) },
  { name: "check_p99", by: METRIC_LABELS.checkDuration, promql: checkQuantileExpr(0.99) },
  {
    name: "check_p99_now",
    by: METRIC_LABELS.checkDuration,
    promql: checkQuantileExpr(0.99, "", METRIC_LABELS.checkDuration, NOW_WINDOW),
  },
  { name: "error_rate", by: METRIC_LABELS.errors, promql: errorRateExpr() },
  { name: "error_rate_now", by: METRIC_LABELS.errors, promql: errorRateExpr("", METRIC_LABELS.errors, NOW_WINDOW) },
  // Whether a fault is over at the first scrape after its end (lib/now-state): how long no check
  // failed / was slow, and the window's rate of slow checks (the error tile's rate is error_rate).
  // Per service, as the error and p99 tiles they qualify.
  { name: "error_quiet", by: [LABEL.service], promql: quietExpr(METRIC_NAMES.lastError) },
  { name: "slow_check_quiet", by: [LABEL.service], promql: quietExpr(METRIC_NAMES.lastSlowCheck) },
  { name: "slow_check_rate", by: [LABEL.service], promql: slowCheckRateExpr() },
  {
    name: "dlq_rate",
    by: METRIC_LABELS.poisoned,
    promql: `sum by (service, topic, handler, reason_poisoned) (rate(${DLQ_METRIC}[${RATE_WINDOW}]))`,
  },
  // Summed over topics: a cause is a property of the handler's traffic.
  {
    name: "duplicates_by_cause",
    by: METRIC_LABELS.duplicatesByCause.filter((l) => l !== LABEL.topic),
    promql: `sum by (service, handler, cause) (rate(${DUPLICATES_BY_CAUSE_METRIC}[${RATE_WINDOW}]))`,
  },
  { name: "payload_conflicts", by: PAYLOAD_CONFLICT_GROUP, promql: payloadConflictsExpr() },
  // Fingerprints of chosen fields taken over the bytes (a payload that is not JSON), over the same window.
  {
    name: "fingerprint_fallbacks",
    by: METRIC_LABELS.fingerprintFallbacks,
    promql: `sum by (service, handler) (increase(${METRIC_NAMES.fingerprintFallbacks}[${RATE_WINDOW}]))`,
  },
  // Messages fail-open ran without a check over the window: a count of runs, not a rate.
  {
    name: "unchecked",
    by: METRIC_LABELS.unchecked,
    promql: `sum by (${METRIC_LABELS.unchecked.join(", ")}) (increase(${METRIC_NAMES.unchecked}[${RATE_WINDOW}]))`,
  },
  { name: "memory_lost", by: OBSERVE_METRIC_LABELS.memoryLost, promql: memoryLostExpr() },
  { name: "dlq_oldest_open_age", by: OBSERVE_METRIC_LABELS.dlqOldestOpenAge, promql: dlqOldestOpenAgeExpr() },
  // The deadman rules' values (lib/deadman-alerts): what Prometheus knows of targets gone.
  { name: "consumer_gone_age", by: ["service"], promql: consumerGoneExpr() },
  { name: "dashboard_down", by: ["job"], promql: dashboardDownExpr() },
  { name: "fleet_gauges_gone_age", by: ["job"], promql: fleetGaugesGoneExpr() },
  // Each live consumer replica Prometheus scrapes, with the instance it scraped it at (the Overview
  // compares them with the consumer groups' members: one fixed query, not per handler).
  {
    name: "consumer_instances",
    by: ["service", "replica", "instance"],
    promql: `max by (service, replica, instance) (${CONSUMER_INFO_METRIC})`,
  },
  // Summed over success values: a failed attempt holds the lease as long as a good one.
  { name: "handler_p50", by: HANDLER_TIME_BY, promql: handlerQuantileExpr(0.5, RATE_WINDOW) },
  { name: "handler_p99", by: HANDLER_TIME_BY, promql: handlerQuantileExpr(0.99, RATE_WINDOW) },
  { name: "handler_p99_1h", by: HANDLER_TIME_BY, promql: handlerQuantileExpr(0.99, HANDLER_P99_LINT_WINDOW) },
  { name: "lease_lost_rate", by: METRIC_LABELS.leaseLost, promql: leaseCounterRateExpr("leaseLost") },
  { name: "in_progress_rate", by: METRIC_LABELS.inProgress, promql: leaseCounterRateExpr("inProgress") },
  { name: "released_rate", by: METRIC_LABELS.released, promql: leaseCounterRateExpr("released") },
  // The consumer's event-loop delay (prom-client's default metric) per service, through the replica
  // info's instance: the dedup check p99 is timed in that process, so this is its floor.
  {
    name: "eventloop_p99",
    by: ["service"],
    promql: `max by (service) (max by (instance, service) (${CONSUMER_INFO_METRIC}) * on (instance) group_left max by (instance) (${EVENTLOOP_P99_METRIC}))`,
  },
  { name: "redis_command_time", by: ["command"], promql: `max by (command) (${REDIS_COMMAND_TIME_METRIC})` },
  // By the `<service>.<handler>` naming, or by the group a handler declares in dedup_handler_info.
  {
    name: "consumer_lag",
    by: ["service", "handler", "topic"],
    promql: `${consumerLagExpr()} or ${declaredGroupLagExpr()}`,
  },
  { name: "consumer_lag_growth", by: ["service", "handler", "topic"], promql: consumerLagGrowthExpr() },
  // Prometheus' own series of alert states: one per instance and state while pending or firing.
  { name: "alert_states", by: ["alertname", "alertstate"], promql: `ALERTS{alertname=~"Dedup.*"}` },
  // Per service: only the instances that export its core series (a chart's restart markers are its consumers', never the dashboard's own).
  { name: "process_start", by: ["instance", "service"], promql: processStartExpr(PROCESS_START_METRIC) },
  // What each handler of the fleet declares (docs/CONTRACT.md), one series per declaration whatever the replicas.
  {
    name: "handler_info",
    by: HANDLER_INFO_LABELS,
    promql: `max by (${HANDLER_INFO_LABELS.join(", ")}) (${HANDLER_INFO_METRIC})`,
  },
  // When each service was last scraped (the newest sample of its core series); stale, so absent, after a failed scrape.
  { name: "scrape_time", by: ["service"], promql: SCRAPE_TIME_EXPR },
  { name: "exported_signals", by: ["service", "metric"], promql: EXPORTED_SIGNALS_EXPR },
  { name: "runtime_latency", by: ["service", "runtime", "metric"], promql: runtimeLatencyExpr() },
  { name: "hot_uuids", by: ["service", "handler", "topic", "uuid"], promql: HOT_UUIDS_EXPR },
  { name: "hot_uuid_error_bound", by: ["service", "handler", "instance", "job"], promql: HOT_UUID_ERROR_BOUND_EXPR },
] as const satisfies readonly NamedQuery[];

/** One named query's name. */
export type QueryName = (typeof NAMED_QUERIES)[number]["name"];

/** Every query name, in the list's order. */
export const QUERY_NAMES: readonly QueryName[] = NAMED_QUERIES.map((q) => q.name);

/** The PromQL of each named query by name: the one table Prometheus' requests are built from. */
export const PROMQL = Object.fromEntries(NAMED_QUERIES.map((q) => [q.name, q.promql])) as Readonly<
  Record<QueryName, string>
>;
