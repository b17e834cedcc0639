/**
 * Metrics the dashboard exports about the dedup store and the DLQ (server/observe), beside the
 * library's (names/dedup.ts): the alert rules and the pages read them by these names.
 * **Imports nothing.**
 */
export const OBSERVE_METRIC_NAMES = {
  /**
   * Gauge `{service, handler}`: the share (0..1) of a handler's dedup keys that disappeared at once
   * — Redis restarted empty, was flushed or failed over to an empty replica — against the count
   * expected from the last count (minus what could have expired since). Held for
   * {@link MEMORY_LOSS_HOLD_MS} after the loss, 0 otherwise.
   */
  memoryLost: "dedup_memory_lost_ratio",
  /**
   * Gauge `{topic, handler, reason_poisoned}`: records in the DLQ topic's retention that the handler
   * poisoned on `topic` with that reason class — what waits for a re-drive (read from the DLQ topic
   * itself, not from a rate).
   */
  dlqBacklog: "dedup_dlq_backlog_records",
  /**
   * Gauge `{topic}`: age in seconds of the oldest open DLQ record (neither re-driven nor discarded)
   * in the DLQ of consumer topic `topic`; 0 when none is open. What `DedupDlqBacklogStale` fires on.
   */
  dlqOldestOpenAge: "dedup_dlq_oldest_open_age_seconds",
} as const;

/** Label names of {@link OBSERVE_METRIC_NAMES}. */
export const OBSERVE_METRIC_LABELS = {
  memoryLost: ["service", "handler"],
  dlqBacklog: ["topic", "handler", "reason_poisoned"],
  dlqOldestOpenAge: ["topic"],
} as const satisfies Record<keyof typeof OBSERVE_METRIC_NAMES, readonly string[]>;

/** How long a detected loss of dedup memory stays on the gauge (and the alert firing). */
export const MEMORY_LOSS_HOLD_MS = 30 * 60_000;

/**
 * Gauge `{service, replica} = 1` per live consumer replica of the app's process (server/transport/replica-id);
 * Prometheus adds the `instance` it scraped, the join the Overview uses to count replicas.
 */
export const CONSUMER_INFO_METRIC = "dedup_consumer_info";

/** Gauge `{command}`: microseconds Redis spent per call of a dedup command over the last sample interval (max over masters). */
export const REDIS_COMMAND_TIME_METRIC = "dedup_redis_command_usec_per_call";

/** The gauge of the process's start (Unix seconds), named as prom-client's default metric; the chart markers show restarts. */
export const PROCESS_START_METRIC = "process_start_time_seconds";

/** prom-client's default gauge of the event loop's p99 delay (seconds), on the app's registry. */
export const EVENTLOOP_P99_METRIC = "nodejs_eventloop_lag_p99_seconds";

/**
 * The label every series of an embedded-mode app's `/api/metrics` carries (`app_mode="embedded"`; not
 * `mode`, which `dedup_handler_info` declares as the handler's guarantee mode): its
 * demo's figures are no real service's, though they bear the same service and handler names. The
 * shipped Prometheus drops such series at scrape (infra/prometheus/prometheus.yml), so real mode
 * started after a demo on the same port does not open with the demo's faults as current alerts.
 */
export const EMBEDDED_SERIES_LABEL = { name: "app_mode", value: "embedded" } as const;
