/**
 * PromQL's functions over snapshots of the app's registry, for the embedded evaluator
 * (./local-eval.ts): `rate`, `increase`, `sum by`, `histogram_quantile`, `deriv` and the "now"
 * window, with the same semantics as Prometheus where the queries rely on them.
 */
import { NOW_LOOKBACK_MS, RATE_WINDOW_MS } from "@/lib/alert-exprs";
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

/** One series' rate (or increase) with its labels. */
export interface Rated {
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
export function quantileAt(
  snaps: readonly Snapshot[],
  q: number,
  t: number,
  name: string,
  by: readonly string[],
  windowMs = RATE_WINDOW_MS,
): Sample[] {
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
    value: histogramQuantile(
      q,
      [...e.buckets].map(([le, count]) => ({ le, count })),
    ),
  }));
}

/** The latest snapshot at or before `t` (a gauge's value then). */
export function latest(snaps: readonly Snapshot[], t: number): Snapshot | undefined {
  return [...snaps].reverse().find((s) => s.t <= t);
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
 * "Now" at `t` as PromQL's `irate` over NOW_LOOKBACK (lib/alert-exprs `NOW_WINDOW`): the last two
 * snapshots at or before `t` within the lookback, or undefined (no value, never a stale one).
 */
export function nowWindow(snaps: readonly Snapshot[], t: number): { t: number; ms: number } | undefined {
  let i = snaps.length - 1;
  while (i >= 0 && snaps[i]!.t > t) i--;
  if (i < 1 || t - snaps[i - 1]!.t >= NOW_LOOKBACK_MS) return undefined;
  return { t: snaps[i]!.t, ms: snaps[i]!.t - snaps[i - 1]!.t + 1 };
}
