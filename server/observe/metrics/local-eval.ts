import { LAG_GROWTH_FLOOR, LAG_GROWTH_WINDOW_MS, METRIC_NAMES, NOW_LOOKBACK_MS, RATE_WINDOW_MS } from "@/lib/thresholds";
import { CONSUMER_INFO_METRIC } from "@/server/transport/replica-id";
import { PROCESSED_RESULT } from "@/names/dedup";
import { KAFKA_METRIC_NAMES } from "@/names/kafka";
import { OBSERVE_METRIC_NAMES } from "@/names/observe";
import { REDIS_COMMAND_TIME_METRIC } from "../redis-command-time";
import { DLQ_METRIC, DUPLICATES_BY_CAUSE_METRIC, EVENTLOOP_P99_METRIC, HANDLER_P99_LINT_WINDOW_MS, HANDLER_TIME_METRIC, PROCESS_START_METRIC, QUERY_BY, type QueryName } from "./queries";
import type { Sample } from "./source";

/** One scrape of the app's registry: every series' value at time `t` (ms). */
export interface Snapshot {
  t: number;
  series: Map<string, SeriesValue>;
}

/** One series (metric name as exposed, e.g. `x_bucket`, and its labels) and its value. */
export interface SeriesValue {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Key of a series: name and sorted labels. */
export function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(",")}}`;
}

interface Rated {
  labels: Record<string, string>;
  rate: number;
}

/**
 * Per-second rate of every series named `name` over the window `(t - windowMs, t]`, counter resets
 * handled like PromQL's `rate()` (a drop counts as a restart from 0). A series needs two samples in
 * the window. Unlike Prometheus there is no extrapolation to the window's edges.
 */
export function rateAt(snaps: readonly Snapshot[], name: string, t: number, windowMs = RATE_WINDOW_MS): Rated[] {
  return increases(snaps, name, t, windowMs).map((a) => ({ labels: a.labels, rate: a.inc / ((a.t1 - a.t0) / 1000) }));
}

/**
 * Increase of every series named `name` over the window, like PromQL's `increase()` but without
 * extrapolation to the window's edges (a young series' 0 → 1 is 1, not 1 × window / span); in the
 * `rate` field of each result. Same two-sample rule as {@link rateAt}.
 */
export function increaseAt(snaps: readonly Snapshot[], name: string, t: number, windowMs = RATE_WINDOW_MS): Rated[] {
  return increases(snaps, name, t, windowMs).map((a) => ({ labels: a.labels, rate: a.inc }));
}

function increases(snaps: readonly Snapshot[], name: string, t: number, windowMs: number) {
  const inWin = snaps.filter((s) => s.t > t - windowMs && s.t <= t);
  const acc = new Map<string, { labels: Record<string, string>; prev: number; inc: number; t0: number; t1: number }>();
  for (const s of inWin) {
    for (const [k, v] of s.series) {
      if (v.name !== name) continue;
      const a = acc.get(k);
      if (!a) acc.set(k, { labels: v.labels, prev: v.value, inc: 0, t0: s.t, t1: s.t });
      else {
        a.inc += v.value >= a.prev ? v.value - a.prev : v.value;
        a.prev = v.value;
        a.t1 = s.t;
      }
    }
  }
  return [...acc.values()].filter((a) => a.t1 > a.t0);
}

/** `sum by (by…)` over rated series. */
export function sumBy(rated: readonly Rated[], by: readonly string[]): Map<string, Sample & { value: number }> {
  const out = new Map<string, Sample & { value: number }>();
  for (const r of rated) {
    const labels: Record<string, string> = {};
    for (const b of by) if (r.labels[b] !== undefined && r.labels[b] !== "") labels[b] = r.labels[b]!;
    const k = seriesKey("", labels);
    const e = out.get(k);
    if (e) e.value += r.rate;
    else out.set(k, { labels, value: r.rate });
  }
  return out;
}

/**
 * PromQL's `histogram_quantile(q, buckets)` for one label set: linear interpolation inside the
 * bucket holding the rank; the `+Inf` bucket answers the highest finite bound. `null` for no data.
 */
export function histogramQuantile(q: number, buckets: ReadonlyArray<{ le: number; count: number }>): number | null {
  const b = [...buckets].sort((x, y) => x.le - y.le);
  if (b.length < 2) return null;
  const last = b[b.length - 1]!;
  if (last.le !== Infinity) return null;
  const total = last.count;
  if (!(total > 0)) return null;
  const rank = q * total;
  let i = b.findIndex((x) => x.count >= rank);
  if (i < 0) i = b.length - 1;
  if (i === b.length - 1) return b[b.length - 2]!.le;
  const end = b[i]!.le;
  const start = i === 0 ? (end > 0 ? 0 : end) : b[i - 1]!.le;
  const prevCount = i === 0 ? 0 : b[i - 1]!.count;
  const inBucket = b[i]!.count - prevCount;
  if (inBucket <= 0) return end;
  return start + (end - start) * ((rank - prevCount) / inBucket);
}

/**
 * `histogram_quantile(q, sum by (le, by…) (rate(<name>_bucket[window])))` at `t`: one sample per
 * label set of `by` (labels absent or empty are left out, as PromQL's `sum by` does).
 */
function quantileAt(snaps: readonly Snapshot[], q: number, t: number, name: string = METRIC_NAMES.checkDuration, by: readonly string[] = ["service"], windowMs = RATE_WINDOW_MS): Sample[] {
  const rated = rateAt(snaps, `${name}_bucket`, t, windowMs);
  const groups = new Map<string, { labels: Record<string, string>; buckets: Map<number, number> }>();
  for (const r of rated) {
    const le = r.labels.le === "+Inf" ? Infinity : Number(r.labels.le);
    const labels: Record<string, string> = {};
    for (const b of by) if (r.labels[b]) labels[b] = r.labels[b]!;
    const k = seriesKey("", labels);
    const e = groups.get(k) ?? { labels, buckets: new Map<number, number>() };
    e.buckets.set(le, (e.buckets.get(le) ?? 0) + r.rate);
    groups.set(k, e);
  }
  return [...groups.values()].map((e) => ({
    labels: e.labels,
    value: histogramQuantile(q, [...e.buckets].map(([le, count]) => ({ le, count }))),
  }));
}

/** The latest snapshot at or before `t` (a gauge's value then). */
function latest(snaps: readonly Snapshot[], t: number): Snapshot | undefined {
  return [...snaps].reverse().find((s) => s.t <= t);
}

/** `service`, `handler` and `topic` of a consumer group named `<service>.<handler>` (this app's naming), else null. */
function handlerOfGroup(labels: Record<string, string>): Record<string, string> | null {
  const m = /^([^.]+)\.(.+)$/.exec(labels.consumergroup ?? "");
  return m ? { service: m[1]!, handler: m[2]!, topic: labels.topic ?? "" } : null;
}

/** Least-squares slope (per second) of `(t ms, value)` points, as PromQL's `deriv`; null under two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number | null {
  if (points.length < 2) return null;
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x / 1000, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x / 1000 - mx) * (y - my);
    den += (x / 1000 - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

/**
 * The lag growth query (`consumer_lag_growth`): the slope of each group's `kafka_consumergroup_lag_sum`
 * over the growth window, where its latest value is above the floor, max per service, handler, topic.
 */
function lagGrowthAt(snaps: readonly Snapshot[], t: number): Sample[] {
  const points = new Map<string, { labels: Record<string, string>; pts: Array<[number, number]>; last: number }>();
  for (const s of snaps) {
    if (s.t <= t - LAG_GROWTH_WINDOW_MS || s.t > t) continue;
    for (const [k, v] of s.series) {
      if (v.name !== KAFKA_METRIC_NAMES.lagSum) continue;
      const e = points.get(k) ?? { labels: v.labels, pts: [], last: v.value };
      e.pts.push([s.t, v.value]);
      e.last = v.value;
      points.set(k, e);
    }
  }
  const out = new Map<string, Sample & { value: number }>();
  for (const e of points.values()) {
    const labels = handlerOfGroup(e.labels);
    const d = slope(e.pts);
    if (!labels || d === null || !(e.last > LAG_GROWTH_FLOOR)) continue;
    const k = seriesKey("", labels);
    out.set(k, { labels, value: Math.max(out.get(k)?.value ?? -Infinity, d) });
  }
  return [...out.values()];
}

/**
 * "Now" at `t` as PromQL's `irate` over NOW_LOOKBACK (lib/alert-exprs `NOW_WINDOW`): the last two
 * snapshots at or before `t` within the lookback, or undefined (no value, never a stale one).
 */
function nowWindow(snaps: readonly Snapshot[], t: number): { t: number; ms: number } | undefined {
  let i = snaps.length - 1;
  while (i >= 0 && snaps[i]!.t > t) i--;
  if (i < 1 || t - snaps[i - 1]!.t >= NOW_LOOKBACK_MS) return undefined;
  return { t: snaps[i]!.t, ms: snaps[i]!.t - snaps[i - 1]!.t + 1 };
}

/** deduplicated / processed per `by` over the window ending at `t`; 0/0 is null, a side without series no sample. */
function ratioAt(snaps: readonly Snapshot[], t: number, by: readonly string[], windowMs = RATE_WINDOW_MS): Sample[] {
  const num = sumBy(rateAt(snaps, METRIC_NAMES.deduplicated, t, windowMs), by);
  const den = sumBy(rateAt(snaps, METRIC_NAMES.processed, t, windowMs), by);
  const out: Sample[] = [];
  for (const [k, n] of num) {
    const d = den.get(k);
    if (d) out.push({ labels: n.labels, value: d.value === 0 ? null : n.value / d.value });
  }
  return out;
}

/**
 * Evaluates a named query at time `t` over the snapshots, with the same semantics as its PromQL
 * (lib/thresholds and ./queries): same labels; a ratio exists only where both sides have series;
 * 0/0 gives `null` (NaN in Prometheus).
 */
export function evaluate(snaps: readonly Snapshot[], q: QueryName, t: number): Sample[] {
  const by = QUERY_BY[q];
  switch (q) {
    case "duplicate_ratio":
      return ratioAt(snaps, t, by);
    case "duplicate_ratio_now": {
      const w = nowWindow(snaps, t);
      return w ? ratioAt(snaps, w.t, by, w.ms) : [];
    }
    case "check_p99_now": {
      const w = nowWindow(snaps, t);
      return w ? quantileAt(snaps, 0.99, w.t, METRIC_NAMES.checkDuration, by, w.ms) : [];
    }
    case "error_rate_now": {
      const w = nowWindow(snaps, t);
      return w ? [...sumBy(rateAt(snaps, METRIC_NAMES.errors, w.t, w.ms), by).values()] : [];
    }
    case "processed_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.processed, t), by).values()];
    case "new_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.processed, t).filter((r) => r.labels.result !== PROCESSED_RESULT.deduplicated), by).values()];
    case "check_p50":
      return quantileAt(snaps, 0.5, t);
    case "check_p99":
      return quantileAt(snaps, 0.99, t);
    case "error_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.errors, t), by).values()];
    case "dlq_rate":
      return [...sumBy(rateAt(snaps, DLQ_METRIC, t), by).values()];
    case "lease_lost_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.leaseLost, t), by).values()];
    case "in_progress_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.inProgress, t), by).values()];
    case "released_rate":
      return [...sumBy(rateAt(snaps, METRIC_NAMES.released, t), by).values()];
    case "payload_conflicts":
      return [...sumBy(increaseAt(snaps, METRIC_NAMES.payloadConflicts, t), by).values()];
    case "memory_lost": {
      // A gauge: its latest values (no Redis in embedded mode: no series).
      const last = latest(snaps, t);
      return last ? [...last.series.values()].filter((v) => v.name === OBSERVE_METRIC_NAMES.memoryLost).map((v) => ({ labels: { service: v.labels.service ?? "", handler: v.labels.handler ?? "" }, value: v.value })) : [];
    }
    case "unchecked":
      return [...sumBy(increaseAt(snaps, METRIC_NAMES.unchecked, t), by).values()];
    case "duplicates_by_cause":
      return [...sumBy(rateAt(snaps, DUPLICATES_BY_CAUSE_METRIC, t), by).values()];
    case "handler_p50":
      return quantileAt(snaps, 0.5, t, HANDLER_TIME_METRIC, by);
    case "handler_p99":
      return quantileAt(snaps, 0.99, t, HANDLER_TIME_METRIC, by);
    case "handler_p99_1h":
      return quantileAt(snaps, 0.99, t, HANDLER_TIME_METRIC, by, HANDLER_P99_LINT_WINDOW_MS);
    case "eventloop_p99": {
      // This process is the one consumer: its event-loop gauge, once per service it runs.
      const last = latest(snaps, t);
      const lag = last ? [...last.series.values()].find((v) => v.name === EVENTLOOP_P99_METRIC) : undefined;
      if (!last || !lag) return [];
      const services = new Set([...last.series.values()].filter((v) => v.name === CONSUMER_INFO_METRIC).map((v) => v.labels.service ?? ""));
      return [...services].map((service) => ({ labels: { service }, value: lag.value }));
    }
    case "redis_command_time": {
      const last = latest(snaps, t);
      return last ? [...last.series.values()].filter((v) => v.name === REDIS_COMMAND_TIME_METRIC).map((v) => ({ labels: { command: v.labels.command ?? "" }, value: v.value })) : [];
    }
    case "consumer_instances": {
      // A gauge: its value in the latest sample at or before t; this process is the one instance.
      const last = [...snaps].reverse().find((s) => s.t <= t);
      if (!last) return [];
      return [...last.series.values()]
        .filter((v) => v.name === CONSUMER_INFO_METRIC)
        .map((v) => ({ labels: { service: v.labels.service ?? "", replica: v.labels.replica ?? "", instance: "local" }, value: v.value }));
    }
    case "consumer_lag": {
      // The gauges of the latest sample (real mode without Prometheus), summed per <service>.<handler> group and topic.
      const out = new Map<string, Sample>();
      for (const v of latest(snaps, t)?.series.values() ?? []) {
        const labels = v.name === KAFKA_METRIC_NAMES.lag ? handlerOfGroup(v.labels) : null;
        if (!labels) continue;
        const k = seriesKey("", labels);
        out.set(k, { labels, value: (out.get(k)?.value ?? 0) + v.value });
      }
      return [...out.values()];
    }
    case "consumer_lag_growth":
      return lagGrowthAt(snaps, t);
    case "alert_states":
      // Prometheus' ALERTS series: the embedded evaluator keeps no history of states.
      return [];
    case "scrape_time": {
      const last = latest(snaps, t);
      return [...new Set([...(last?.series.values() ?? [])].filter((v) => v.name === CONSUMER_INFO_METRIC).map((v) => v.labels.service ?? ""))].map((service) => ({ labels: { service }, value: last!.t / 1000 }));
    }
    case "process_start": {
      const last = [...snaps].reverse().find((s) => s.t <= t);
      const v = [...(last?.series.values() ?? [])].find((x) => x.name === PROCESS_START_METRIC);
      return v ? [{ labels: { instance: "local" }, value: v.value }] : [];
    }
  }
}
