/**
 * The per-runtime signals the check-latency split reads, named as the standard client libraries
 * export them (written once here): a check timed in the consumer includes the time the consumer's
 * runtime was not running it. **Imports nothing.**
 */

/** One runtime's signal of "the process was not running the check". */
export interface RuntimeSignal {
  /** The runtime, as the split names it. */
  runtime: "node" | "jvm" | "go";
  /** The metric the query reads (what to export, as the page says it). */
  metric: string;
  /** Which client library exports it, by default or with which collector. */
  exporter: string;
  /** What the value is (the split shows it beside the runtime). */
  meaning: string;
}

/**
 * Every runtime signal the split knows, in the order it prefers them for one service:
 * - Node: prom-client's default `nodejs_eventloop_lag_p99_seconds` (`collectDefaultMetrics`);
 * - JVM: Micrometer's `jvm_gc_pause_seconds` (a timer: `_max` is the longest recent pause) and the
 *   Prometheus Java client's `jvm_gc_collection_seconds` (simpleclient_hotspot's `GarbageCollectorExports`, a
 *   summary: `_sum / _count` is the mean pause per collection over the window);
 * - Go: client_golang's `go_sched_latencies_seconds` (runtime/metrics, a histogram: its p99 is how
 *   long a runnable goroutine waited for a thread).
 */
export const RUNTIME_SIGNALS = {
  nodeEventLoop: {
    runtime: "node",
    metric: "nodejs_eventloop_lag_p99_seconds",
    exporter: "the Node client's default metrics (collectDefaultMetrics)",
    meaning: "event loop p99",
  },
  jvmGcPauseMicrometer: {
    runtime: "jvm",
    metric: "jvm_gc_pause_seconds",
    exporter: "Micrometer JvmGcMetrics",
    meaning: "JVM GC pause max",
  },
  jvmGcCollection: {
    runtime: "jvm",
    metric: "jvm_gc_collection_seconds",
    exporter: "Prometheus Java client simpleclient_hotspot",
    meaning: "JVM GC pause mean",
  },
  goSchedLatency: {
    runtime: "go",
    metric: "go_sched_latencies_seconds",
    exporter: "client_golang runtime/metrics",
    meaning: "Go scheduler latency p99",
  },
} as const satisfies Record<string, RuntimeSignal>;

/** The key of one runtime signal. */
export type RuntimeSignalKey = keyof typeof RUNTIME_SIGNALS;

/** The metric names a service could export for the split, for "not known for this runtime: export one of …". */
export const RUNTIME_SIGNAL_METRICS: readonly string[] = Object.values(RUNTIME_SIGNALS).map((s) => s.metric);
