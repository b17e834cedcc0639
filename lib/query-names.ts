/**
 * The named queries the dashboard runs, as names only (isomorphic: an alert entry in
 * `lib/thresholds.ts` names the query of its value). Their PromQL lives in
 * `server/observe/metrics/queries.ts` (`PROMQL`, a record over this list, so a new name without
 * PromQL is a type error) and their embedded evaluation in `server/observe/metrics/local-eval.ts`
 * (`EVALUATE`, a record over this list too). **Never PromQL from a request**: a request picks a name.
 */
export const QUERY_NAMES = [
  "duplicate_ratio",
  "duplicate_ratio_now",
  "processed_rate",
  "new_rate",
  "check_p50",
  "check_p99",
  "check_p99_now",
  "error_rate",
  "error_rate_now",
  "error_quiet",
  "slow_check_quiet",
  "slow_check_rate",
  "dlq_rate",
  "duplicates_by_cause",
  "payload_conflicts",
  "unchecked",
  "memory_lost",
  "dlq_oldest_open_age",
  "consumer_gone_age",
  "dashboard_down",
  "fleet_gauges_gone_age",
  "consumer_instances",
  "handler_p50",
  "handler_p99",
  "handler_p99_1h",
  "lease_lost_rate",
  "in_progress_rate",
  "released_rate",
  "eventloop_p99",
  "redis_command_time",
  "consumer_lag",
  "consumer_lag_growth",
  "alert_states",
  "process_start",
  "handler_info",
  "scrape_time",
  "exported_signals",
  "runtime_latency",
  "hot_uuids",
  "hot_uuid_error_bound",
] as const;

/** One named query. */
export type QueryName = (typeof QUERY_NAMES)[number];
