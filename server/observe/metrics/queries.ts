import { checkQuantileExpr, duplicateRatioExpr, errorRateExpr, METRIC_NAMES, RATE_WINDOW } from "@/lib/thresholds";

/**
 * Counter of messages sent to the DLQ, by `reason_poisoned`. **Seam**: spec §7 has no DLQ metric
 * and the library's PoisonQueue does not count yet; the demo consumer (or the library) is asked to
 * export this name with labels `service, topic, handler, reason_poisoned`. Until then the
 * `dlq_rate` series is empty (never an error).
 */
export const DLQ_METRIC = "messages_poisoned_total";

/** The named queries the dashboard runs. **Never PromQL from a request**: a request picks a name. */
export const QUERY_NAMES = [
  "duplicate_ratio",
  "processed_rate",
  "new_rate",
  "check_p50",
  "check_p99",
  "error_rate",
  "dlq_rate",
] as const;
/** One named query. */
export type QueryName = (typeof QUERY_NAMES)[number];

/** Labels each named query's series carry. */
export const QUERY_BY: Record<QueryName, readonly string[]> = {
  duplicate_ratio: ["service", "topic", "handler"],
  processed_rate: ["service", "topic", "handler", "result"],
  new_rate: ["service", "topic", "handler"],
  check_p50: ["service"],
  check_p99: ["service"],
  error_rate: ["service", "reason"],
  dlq_rate: ["service", "topic", "handler", "reason_poisoned"],
};

/** PromQL of each named query (the duplicate ratio, error rate and p99 are the alert expressions of lib/thresholds). */
export const PROMQL: Record<QueryName, string> = {
  duplicate_ratio: duplicateRatioExpr(),
  processed_rate: `sum by (service, topic, handler, result) (rate(${METRIC_NAMES.processed}[${RATE_WINDOW}]))`,
  new_rate: `sum by (service, topic, handler) (rate(${METRIC_NAMES.processed}{result!="deduplicated"}[${RATE_WINDOW}]))`,
  check_p50: checkQuantileExpr(0.5),
  check_p99: checkQuantileExpr(0.99),
  error_rate: errorRateExpr(),
  dlq_rate: `sum by (service, topic, handler, reason_poisoned) (rate(${DLQ_METRIC}[${RATE_WINDOW}]))`,
};
