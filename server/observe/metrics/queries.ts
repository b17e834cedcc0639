import { CONSUMER_INFO_METRIC } from "@/server/transport/replica-id";
import {
  ALERTS,
  NOW_WINDOW,
  checkQuantileExpr,
  consumerLagExpr,
  duplicateRatioExpr,
  errorRateExpr,
  leaseCounterRateExpr,
  METRIC_NAMES,
  RATE_WINDOW,
} from "@/lib/thresholds";
import {
  LABEL,
  METRIC_LABELS,
  METRIC_NAMES as LIBRARY_METRIC_NAMES,
  PROCESSED_RESULT,
  SLOW_CHECK_SECONDS,
} from "@/names/dedup";
import type { QueryName } from "@/lib/query-names";
import { REDIS_COMMAND_TIME_METRIC } from "../redis-command-time";
import { OBSERVE_METRIC_LABELS } from "@/names/observe";
import { HANDLER_INFO_LABELS, HANDLER_INFO_METRIC } from "@/names/dedup";
import { declaredGroupLagExpr } from "./declared-lag";
import {
  EXPORTED_SIGNALS_EXPR,
  HOT_UUID_ERROR_BOUND_EXPR,
  HOT_UUIDS_EXPR,
  processStartExpr,
  runtimeLatencyExpr,
  SCRAPE_TIME_EXPR,
} from "./signal-queries";

/** The gauge of the process's start (Unix seconds), named as prom-client's default metric; the chart markers show restarts. */
export const PROCESS_START_METRIC = "process_start_time_seconds";

/**
 * Counter of messages sent to the DLQ, by `reason_poisoned` (a bounded error class). Spec §7 has no
 * DLQ metric: the library's PoisonQueue counts this one when given a registry (`defaultStack` passes
 * the Deduplicator's), labels `service, topic, handler, reason_poisoned`. A consumer that does not
 * export it leaves the `dlq_rate` series empty (never an error).
 */
export const DLQ_METRIC = LIBRARY_METRIC_NAMES.poisoned;

/**
 * Counter of swallowed duplicates by `cause` (redelivery | republish | unknown), from the position
 * stored in the key's `done` value (the library's name, names/dedup.ts `METRIC_NAMES.duplicatesByCause`).
 */
export const DUPLICATES_BY_CAUSE_METRIC = LIBRARY_METRIC_NAMES.duplicatesByCause;

/** prom-client's default gauge of the event loop's p99 delay (seconds), on the app's registry. */
export const EVENTLOOP_P99_METRIC = "nodejs_eventloop_lag_p99_seconds";

export { QUERY_NAMES, type QueryName } from "@/lib/query-names";

/** Histogram of one handler attempt's duration (the library's `handlerTimer`, names/dedup.ts). */
export const HANDLER_TIME_METRIC = LIBRARY_METRIC_NAMES.handlerExecutionTime;

/** Window of the lint's handler p99 (`handler_p99_1h`): an hour, so a burst does not warn and a trend does. */
export const HANDLER_P99_LINT_WINDOW = "1h";
/** {@link HANDLER_P99_LINT_WINDOW} in ms, for the embedded evaluation. */
export const HANDLER_P99_LINT_WINDOW_MS = 3_600_000;

/** Labels of the handler-time quantiles: the histogram's without `success`. */
const HANDLER_TIME_BY = METRIC_LABELS.handlerExecutionTime.filter((l) => l !== LABEL.success);

/**
 * PromQL of a quantile of one handler attempt's duration (seconds) per service and handler, over
 * `window`; both `success` values count (a failed attempt holds the lease as long as a good one).
 */
export function handlerQuantileExpr(q: number, window: string): string {
  return `histogram_quantile(${q}, sum by (${["le", ...HANDLER_TIME_BY].join(", ")}) (rate(${HANDLER_TIME_METRIC}_bucket[${window}])))`;
}

/**
 * PromQL of the seconds from the newest `bad` moment (a per-handler Unix-seconds gauge: the last
 * error, the last slow check) of any handler and replica of a service to the scrape that read it
 * (`timestamp()`: the scrape's own time, not the query's), per service — 0 where no check of the
 * service came after it (`deduplication_last_check_timestamp_seconds` not newer): nothing then says
 * the fault is over. No series: no such moment in any live process (never, or since a restart).
 */
export function quietExpr(bad: string): string {
  const last = LIBRARY_METRIC_NAMES.lastCheck;
  const age = `min by (service) (timestamp(${bad}) - ${bad})`;
  return `(${age} and on (service) (max by (service) (${last}) > on (service) max by (service) (${bad}))) or on (service) (${age} * 0)`;
}

/**
 * PromQL of the checks slower than {@link SLOW_CHECK_SECONDS} per second over the alert's window,
 * per service: every sample minus those in the threshold's bucket.
 */
export function slowCheckRateExpr(): string {
  const h = LIBRARY_METRIC_NAMES.checkDuration;
  return `sum by (service) (rate(${h}_count[${RATE_WINDOW}])) - sum by (service) (rate(${h}_bucket{le="${SLOW_CHECK_SECONDS}"}[${RATE_WINDOW}]))`;
}

/** Labels of the "now" duplicate ratio: per handler, over all its topics. */
const NOW_RATIO_BY = METRIC_LABELS.deduplicated.filter((l) => l !== LABEL.topic);

/** Labels each named query's series carry (the library's from names/dedup `METRIC_LABELS`). */
export const QUERY_BY: Record<QueryName, readonly string[]> = {
  duplicate_ratio: METRIC_LABELS.deduplicated,
  // Per handler, summed over topics: the tile beside the window's figure is the handler's.
  duplicate_ratio_now: NOW_RATIO_BY,
  processed_rate: METRIC_LABELS.processed,
  new_rate: METRIC_LABELS.deduplicated,
  check_p50: METRIC_LABELS.checkDuration,
  check_p99: METRIC_LABELS.checkDuration,
  check_p99_now: METRIC_LABELS.checkDuration,
  error_rate: METRIC_LABELS.errors,
  error_rate_now: METRIC_LABELS.errors,
  // Per service, as the error and p99 tiles they qualify.
  error_quiet: [LABEL.service],
  slow_check_quiet: [LABEL.service],
  slow_check_rate: [LABEL.service],
  dlq_rate: METRIC_LABELS.poisoned,
  // Summed over topics: a cause is a property of the handler's traffic.
  duplicates_by_cause: METRIC_LABELS.duplicatesByCause.filter((l) => l !== LABEL.topic),
  payload_conflicts: METRIC_LABELS.payloadConflicts,
  unchecked: METRIC_LABELS.unchecked,
  memory_lost: OBSERVE_METRIC_LABELS.memoryLost,
  dlq_oldest_open_age: OBSERVE_METRIC_LABELS.dlqOldestOpenAge,
  consumer_gone_age: ["service"],
  dashboard_down: ["job"],
  fleet_gauges_gone_age: ["job"],
  consumer_instances: ["service", "replica", "instance"],
  // Summed over success values: a failed attempt holds the lease as long as a good one.
  handler_p50: HANDLER_TIME_BY,
  handler_p99: HANDLER_TIME_BY,
  handler_p99_1h: HANDLER_TIME_BY,
  lease_lost_rate: METRIC_LABELS.leaseLost,
  in_progress_rate: METRIC_LABELS.inProgress,
  released_rate: METRIC_LABELS.released,
  eventloop_p99: ["service"],
  redis_command_time: ["command"],
  consumer_lag: ["service", "handler", "topic"],
  consumer_lag_growth: ["service", "handler", "topic"],
  alert_states: ["alertname", "alertstate"],
  process_start: ["instance", "service"],
  handler_info: HANDLER_INFO_LABELS,
  scrape_time: ["service"],
  exported_signals: ["service", "metric"],
  runtime_latency: ["service", "runtime", "metric"],
  hot_uuids: ["service", "handler", "topic", "uuid"],
  hot_uuid_error_bound: ["service", "handler", "instance", "job"],
};

/** PromQL of each named query; an alert's query is its expression, taken from its entry in lib/thresholds (written once there). */
export const PROMQL: Record<QueryName, string> = {
  duplicate_ratio: ALERTS.duplicateRate.valueExpr,
  // "Now" beside each alert value: the same expression over the last scrape interval (lib/alert-exprs NOW_WINDOW).
  duplicate_ratio_now: duplicateRatioExpr("", NOW_RATIO_BY, NOW_WINDOW),
  processed_rate: `sum by (service, topic, handler, result) (rate(${METRIC_NAMES.processed}[${RATE_WINDOW}]))`,
  new_rate: `sum by (service, topic, handler) (rate(${METRIC_NAMES.processed}{result!="${PROCESSED_RESULT.deduplicated}"}[${RATE_WINDOW}]))`,
  check_p50: checkQuantileExpr(0.5),
  check_p99: ALERTS.redisLatency.valueExpr,
  check_p99_now: checkQuantileExpr(0.99, "", METRIC_LABELS.checkDuration, NOW_WINDOW),
  error_rate: ALERTS.redisErrors.valueExpr,
  error_rate_now: errorRateExpr("", METRIC_LABELS.errors, NOW_WINDOW),
  // Whether a fault is over at the first scrape after its end (lib/now-state): how long no check
  // failed / was slow, and the window's rate of slow checks (the error tile's rate is error_rate).
  error_quiet: quietExpr(LIBRARY_METRIC_NAMES.lastError),
  slow_check_quiet: quietExpr(LIBRARY_METRIC_NAMES.lastSlowCheck),
  slow_check_rate: slowCheckRateExpr(),
  dlq_rate: `sum by (service, topic, handler, reason_poisoned) (rate(${DLQ_METRIC}[${RATE_WINDOW}]))`,
  payload_conflicts: ALERTS.payloadConflict.valueExpr,
  // Messages fail-open ran without a check over the window: a count of runs, not a rate.
  memory_lost: ALERTS.memoryLost.valueExpr,
  dlq_oldest_open_age: ALERTS.dlqBacklogStale.valueExpr,
  // The deadman rules' values (lib/deadman-alerts): what Prometheus knows of targets gone.
  consumer_gone_age: ALERTS.consumerSilent.valueExpr,
  dashboard_down: ALERTS.dashboardDown.valueExpr,
  fleet_gauges_gone_age: ALERTS.fleetGaugesMissing.valueExpr,
  unchecked: `sum by (${METRIC_LABELS.unchecked.join(", ")}) (increase(${METRIC_NAMES.unchecked}[${RATE_WINDOW}]))`,
  duplicates_by_cause: `sum by (service, handler, cause) (rate(${DUPLICATES_BY_CAUSE_METRIC}[${RATE_WINDOW}]))`,
  // Each live consumer replica Prometheus scrapes, with the instance it scraped it at (the Overview
  // compares them with the consumer groups' members: one fixed query, not per handler).
  consumer_instances: `max by (service, replica, instance) (${CONSUMER_INFO_METRIC})`,
  handler_p50: handlerQuantileExpr(0.5, RATE_WINDOW),
  handler_p99: handlerQuantileExpr(0.99, RATE_WINDOW),
  handler_p99_1h: handlerQuantileExpr(0.99, HANDLER_P99_LINT_WINDOW),
  lease_lost_rate: ALERTS.leaseLost.valueExpr,
  in_progress_rate: leaseCounterRateExpr("inProgress"),
  released_rate: leaseCounterRateExpr("released"),
  // The consumer's event-loop delay (prom-client's default metric) per service, through the replica
  // info's instance: the dedup check p99 is timed in that process, so this is its floor.
  eventloop_p99: `max by (service) (max by (instance, service) (${CONSUMER_INFO_METRIC}) * on (instance) group_left max by (instance) (${EVENTLOOP_P99_METRIC}))`,
  redis_command_time: `max by (command) (${REDIS_COMMAND_TIME_METRIC})`,
  // By the `<service>.<handler>` naming, or by the group a handler declares in dedup_handler_info.
  consumer_lag: `${consumerLagExpr()} or ${declaredGroupLagExpr()}`,
  consumer_lag_growth: ALERTS.consumerLagGrowing.valueExpr,
  // Prometheus' own series of alert states: one per instance and state while pending or firing.
  alert_states: `ALERTS{alertname=~"Dedup.*"}`,
  // Per service: only the instances that export its core series (a chart's restart markers are its consumers', never the dashboard's own).
  process_start: processStartExpr(PROCESS_START_METRIC),
  // What each handler of the fleet declares (docs/CONTRACT.md), one series per declaration whatever the replicas.
  handler_info: `max by (${HANDLER_INFO_LABELS.join(", ")}) (${HANDLER_INFO_METRIC})`,
  // When each service was last scraped (the newest sample of its core series); stale, so absent, after a failed scrape.
  scrape_time: SCRAPE_TIME_EXPR,
  exported_signals: EXPORTED_SIGNALS_EXPR,
  runtime_latency: runtimeLatencyExpr(),
  hot_uuids: HOT_UUIDS_EXPR,
  hot_uuid_error_bound: HOT_UUID_ERROR_BOUND_EXPR,
};
