/**
 * PromQL helpers of the named queries (`lib/named-queries.ts`) that are not an alert's value (those
 * are in `lib/alert-exprs.ts`): handler-time quantiles, the quiet since a fault, slow checks, the lag
 * by declared group. Isomorphic: no Node imports.
 */
import { LABEL, METRIC_LABELS, METRIC_NAMES, SLOW_CHECK_SECONDS } from "@/names/dedup";
import { HANDLER_INFO_METRIC } from "@/names/contract";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { RATE_WINDOW } from "@/lib/alert-exprs";

/**
 * Counter of messages sent to the DLQ, by `reason_poisoned` (a bounded error class). Spec §7 has no
 * DLQ metric: the library's PoisonQueue counts this one when given a registry (`defaultStack` passes
 * the Deduplicator's), labels `service, topic, handler, reason_poisoned`. A consumer that does not
 * export it leaves the `dlq_rate` series empty (never an error).
 */
export const DLQ_METRIC = METRIC_NAMES.poisoned;

/**
 * Counter of swallowed duplicates by `cause` (redelivery | republish | unknown), from the position
 * stored in the key's `done` value (the library's name, names/dedup.ts `METRIC_NAMES.duplicatesByCause`).
 */
export const DUPLICATES_BY_CAUSE_METRIC = METRIC_NAMES.duplicatesByCause;

/** Histogram of one handler attempt's duration (the library's `handlerTimer`, names/dedup.ts). */
export const HANDLER_TIME_METRIC = METRIC_NAMES.handlerExecutionTime;

/** Window of the lint's handler p99 (`handler_p99_1h`): an hour, so a burst does not warn and a trend does. */
export const HANDLER_P99_LINT_WINDOW = "1h";
/** {@link HANDLER_P99_LINT_WINDOW} in ms, for the embedded evaluation. */
export const HANDLER_P99_LINT_WINDOW_MS = 3_600_000;

/** Labels of the handler-time quantiles: the histogram's without `success`. */
export const HANDLER_TIME_BY = METRIC_LABELS.handlerExecutionTime.filter((l) => l !== LABEL.success);

/** Labels of the "now" duplicate ratio: per handler, over all its topics. */
export const NOW_RATIO_BY = METRIC_LABELS.deduplicated.filter((l) => l !== LABEL.topic);

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
  const last = METRIC_NAMES.lastCheck;
  const age = `min by (service) (timestamp(${bad}) - ${bad})`;
  return `(${age} and on (service) (max by (service) (${last}) > on (service) max by (service) (${bad}))) or on (service) (${age} * 0)`;
}

/**
 * PromQL of the checks slower than {@link SLOW_CHECK_SECONDS} per second over the alert's window,
 * per service: every sample minus those in the threshold's bucket.
 */
export function slowCheckRateExpr(): string {
  const h = METRIC_NAMES.checkDuration;
  return `sum by (service) (rate(${h}_count[${RATE_WINDOW}])) - sum by (service) (rate(${h}_bucket{le="${SLOW_CHECK_SECONDS}"}[${RATE_WINDOW}]))`;
}

/**
 * PromQL of the lag (messages not consumed) per `service`, `handler` and `topic` of every consumer
 * group a handler declares in `dedup_handler_info{group}` (docs/CONTRACT.md §5): a consumer whose
 * group is not named `<service>.<handler>` (a Java service's `billing-workers`) gets its lag on its
 * handler's page too, beside `consumerLagExpr` (lib/alert-exprs), which joins by that naming. One
 * handler per group is kept (`topk`), so two handlers declaring one group cannot make the join fail
 * for everyone.
 */
export function declaredGroupLagExpr(): string {
  const lag = `label_replace(sum by (consumergroup, topic, instance) (${KAFKA_METRIC_NAMES.lag}), "group", "$1", "consumergroup", "(.+)")`;
  const info = `topk by (group) (1, max by (group, service, handler) (${HANDLER_INFO_METRIC}))`;
  return `max by (service, handler, topic) (${lag} * on (group) group_left (service, handler) ${info})`;
}
