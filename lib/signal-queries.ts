/**
 * PromQL of the queries that say what a service exports and whether it is scraped (lib/signals):
 * decided from Prometheus' own series, so a consumer in any process or language is judged by what
 * it exports, not by what the dashboard's process registered.
 */
import { RATE_WINDOW } from "@/lib/alert-exprs";
import { HOT_UUID_METRICS } from "@/names/dedup";
import { CORE_METRICS, OPTIONAL_SIGNALS } from "@/lib/signals";
import { RUNTIME_SIGNALS } from "@/names/runtime";

/** A selector of any of `names`' series. */
const anyOf = (names: readonly string[]) => `{__name__=~"${names.join("|")}"}`;

/**
 * When each service was last scraped: the newest sample time of any of its core series. A failed
 * scrape (`up == 0`) or a target gone marks them stale, so the service has no value from then on.
 */
export const SCRAPE_TIME_EXPR = `max by (service) (timestamp(${anyOf(CORE_METRICS)}))`;

/** Which optional signals each service exports now: one series per service and metric, its name in `metric`. */
export const EXPORTED_SIGNALS_EXPR = `label_replace(group by (service, __name__) (${anyOf(Object.values(OPTIONAL_SIGNALS))}), "metric", "$1", "__name__", "(.+)")`;

/** The scrape targets (instance, job) that export each service's core series. */
const SERVICE_TARGETS = `group by (instance, job, service) (${anyOf(CORE_METRICS)})`;

/** `perTarget` (by instance, job) of the targets exporting each service, max per service, labelled with its runtime and metric. */
function perService(perTarget: string, runtime: string, metric: string): string {
  const joined = `max by (service) (${SERVICE_TARGETS} * on (instance, job) group_left () (${perTarget}))`;
  return `label_replace(label_replace(${joined}, "runtime", "${runtime}", "", ""), "metric", "${metric}", "", "")`;
}

/**
 * The runtime signal of each service's processes (names/runtime), seconds: Node's event-loop p99,
 * Micrometer's longest GC pause, simpleclient_hotspot's mean GC pause over the window (0 without a
 * collection), Go's scheduler-latency p99. A service that exports none has no series.
 */
export function runtimeLatencyExpr(): string {
  const s = RUNTIME_SIGNALS;
  const w = RATE_WINDOW;
  return [
    perService(`max by (instance, job) (${s.nodeEventLoop.metric})`, s.nodeEventLoop.runtime, s.nodeEventLoop.metric),
    perService(
      `max by (instance, job) (${s.jvmGcPauseMicrometer.metric}_max)`,
      s.jvmGcPauseMicrometer.runtime,
      s.jvmGcPauseMicrometer.metric,
    ),
    perService(
      `(sum by (instance, job) (rate(${s.jvmGcCollection.metric}_sum[${w}])) / clamp_min(sum by (instance, job) (rate(${s.jvmGcCollection.metric}_count[${w}])), 1e-9))`,
      s.jvmGcCollection.runtime,
      s.jvmGcCollection.metric,
    ),
    perService(
      `histogram_quantile(0.99, sum by (instance, job, le) (rate(${s.goSchedLatency.metric}_bucket[${w}])))`,
      s.goSchedLatency.runtime,
      s.goSchedLatency.metric,
    ),
  ].join(" or ");
}

/**
 * The start time of each process that exports a service's core series, per instance and service:
 * a restart marker on a service's chart is one of its own consumers', not another process's (the
 * dashboard's own restart included) that happens to be scraped by the same Prometheus.
 */
export function processStartExpr(startMetric: string): string {
  return `max by (instance, service) (${SERVICE_TARGETS} * on (instance, job) group_left () max by (instance, job) (${startMetric}))`;
}

/** Every process's exported hot UUIDs, summed over processes (their replicas are merged in each). */
export const HOT_UUIDS_EXPR = `sum by (service, handler, topic, uuid) (${HOT_UUID_METRICS.copies})`;

/** Each process's hot-UUID error bound, per target: the server adds them up and counts the processes. */
export const HOT_UUID_ERROR_BOUND_EXPR = `max by (service, handler, instance, job) (${HOT_UUID_METRICS.errorBound})`;
