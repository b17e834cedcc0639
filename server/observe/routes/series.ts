import type { RangeKey } from "@/lib/api/common";
import type { SeriesLine, SeriesMetric, SeriesResponse } from "@/lib/api/series";
import { RANGE_SECONDS } from "@/lib/ranges";
import { chartLines } from "@/lib/thresholds";
import type { ObserveContext } from "../core/ports";
import type { QueryName } from "@/lib/named-queries";
import { got, unavailable } from "../shared/upstream";
import { maskScrapeGaps } from "../shared/scrape-gaps";
import { MAX_POINTS } from "../shared/series-step";
import { measured, readSignals, scrapeState } from "../shared/signals";
import type { OptionalSignal } from "@/lib/signals";

/** A latency chart's two lines: the p50 and the p99 query of one histogram. */
const medianAndP99 = (p50: QueryName, p99: QueryName) => [
  { q: p50, name: "p50" },
  { q: p99, name: "p99" },
];

/** One named series: its queries, unit, threshold lines, whether it is per handler, and the optional signal it needs (lib/signals). */
interface SeriesSpec {
  queries: Array<{ q: QueryName; name: string }>;
  unit: SeriesResponse["unit"];
  lines: SeriesResponse["thresholds"];
  perHandler: boolean;
  signal?: OptionalSignal;
}

const SERIES: Record<SeriesMetric, SeriesSpec> = {
  duplicate_ratio: {
    queries: [{ q: "duplicate_ratio", name: "" }],
    unit: "ratio",
    lines: chartLines("duplicateRate"),
    perHandler: true,
  },
  processed_rate: { queries: [{ q: "processed_rate", name: "" }], unit: "per_second", lines: [], perHandler: true },
  check_latency: {
    queries: medianAndP99("check_p50", "check_p99"),
    unit: "seconds",
    lines: chartLines("redisLatency"),
    perHandler: false,
  },
  error_rate: {
    queries: [{ q: "error_rate", name: "" }],
    unit: "per_second",
    lines: chartLines("redisErrors"),
    perHandler: false,
  },
  dlq_rate: {
    queries: [{ q: "dlq_rate", name: "" }],
    unit: "per_second",
    lines: [],
    perHandler: true,
    signal: "poisoned",
  },
  duplicates_by_cause: {
    queries: [{ q: "duplicates_by_cause", name: "" }],
    unit: "per_second",
    lines: [],
    perHandler: true,
    signal: "byCause",
  },
  // The lease line is per handler: the page draws it from the declared leaseMs (/api/lint).
  handler_time: {
    queries: medianAndP99("handler_p50", "handler_p99"),
    unit: "seconds",
    lines: [],
    perHandler: true,
    signal: "handlerTime",
  },
  // The lease counters of one handler side by side: lease lost pages (DedupLeaseLost), the other two explain it.
  lease_events: {
    queries: [
      { q: "lease_lost_rate", name: "lease lost" },
      { q: "in_progress_rate", name: "in progress" },
      { q: "released_rate", name: "released" },
    ],
    unit: "per_second",
    lines: chartLines("leaseLost"),
    perHandler: true,
    signal: "leaseLost",
  },
  // Counted over the 5-min window (the alert's value): any point above 0 is the alert firing.
  payload_conflicts: {
    queries: [
      { q: "payload_conflicts", name: "conflicts" },
      // Only a handler with chosen fingerprint fields has it: payloads it fingerprinted by their bytes.
      { q: "fingerprint_fallbacks", name: "not JSON (bytes fingerprint)" },
    ],
    unit: "count",
    lines: chartLines("payloadConflict"),
    perHandler: true,
    signal: "payloadConflicts",
  },
  // Messages behind, per topic: kafka_consumergroup_lag of the <service>.<handler> group.
  consumer_lag: { queries: [{ q: "consumer_lag", name: "" }], unit: "count", lines: [], perHandler: true },
};

/** Parameters of {@link getSeries} (validated by the route). */
export interface SeriesParams {
  metric: SeriesMetric;
  service?: string;
  handler?: string;
  range: RangeKey;
  step?: number;
}

/**
 * Builds `GET /api/series`: one named query (two for latency) over the range. `service` and
 * `handler` filter the answer by label (they never reach PromQL); latency and errors are per
 * service, so `handler` only narrows them to its service.
 */
export function getSeries(ctx: ObserveContext, p: SeriesParams): Promise<SeriesResponse> {
  // Shared between viewers of the same chart for about a second (the local source computes per call).
  const key = `series:${p.metric}:${p.range}:${p.step ?? ""}:${p.service ?? ""}\u0000${p.handler ?? ""}`;
  return ctx.answers.get(key, () => buildSeries(ctx, p));
}

async function buildSeries(ctx: ObserveContext, p: SeriesParams): Promise<SeriesResponse> {
  const spec = SERIES[p.metric];
  const rangeSec = RANGE_SECONDS[p.range];
  const step = Math.max(p.step ?? Math.max(1, Math.ceil(rangeSec / 240)), Math.ceil(rangeSec / MAX_POINTS));
  const end = Math.floor(Date.now() / 1000);
  const [scrapes, ...results] = await Promise.all([
    got(ctx.metrics.range("scrape_time", end - rangeSec, end, step)),
    ...spec.queries.map(({ q }) => got(ctx.metrics.range(q, end - rangeSec, end, step))),
  ]);
  const failed = results.find((r) => !r.ok);
  // What the service exports and whether it is scraped: a chart of a signal it does not export says so.
  const sig = p.service === undefined ? null : await readSignals(ctx.metrics, end, [p.service]);
  const notMeasured = sig && spec.signal ? measured(sig, p.service!, spec.signal) : null;
  const keep = (l: Record<string, string>) =>
    (p.service === undefined || l.service === p.service) &&
    (!spec.perHandler || p.handler === undefined || l.handler === p.handler);
  const series: SeriesLine[] = [];
  results.forEach((r, i) => {
    if (!r.ok) return;
    for (const s of r.value) {
      if (!keep(s.labels)) continue;
      const prefix = spec.queries[i]!.name;
      const label = Object.entries(s.labels)
        .filter(([k]) => k !== "topic" || p.metric === "processed_rate")
        .map(([, v]) => v)
        .join(" / ");
      series.push({ name: [prefix, label].filter(Boolean).join(" ") || p.metric, labels: s.labels, points: s.points });
    }
  });
  return {
    generatedAt: new Date().toISOString(),
    metric: p.metric,
    range: p.range,
    stepSeconds: step,
    source: ctx.metrics.kind,
    unit: spec.unit,
    thresholds: spec.lines.map((l) => ({ value: l.value, label: l.label, kind: l.kind })),
    // Where a service was not scraped its lines break, though a 5-min rate still has a value there.
    data:
      failed && !failed.ok
        ? unavailable(failed.detail)
        : notMeasured?.status === "unknown"
          ? notMeasured
          : { status: "ok", series: scrapes.ok ? maskScrapeGaps(series, scrapes.value, step) : series },
    ...(sig ? { scrape: scrapeState(sig, p.service!) } : {}),
  };
}
