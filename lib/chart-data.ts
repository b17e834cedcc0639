/**
 * Pure helpers of the chart wrapper: turning the API's `[unixSeconds, value|null][]` lines into
 * recharts rows, the legend statistics, and a Y domain that always includes the threshold
 * (grafana#12135: a threshold line is invisible when the axis stops below it).
 */
import type { SeriesLine } from "@/lib/api/series";

/** One recharts row: `t` (unix seconds) and one field per series (`s0`, `s1`, …). */
export type Row = { t: number } & Record<string, number | null>;

/** Series key of index `i` (recharts reads dots in dataKey as paths, so names cannot be keys). */
export const seriesKey = (i: number) => `s${i}`;

/**
 * The step of the answer: the smallest distance between two consecutive timestamps of any line
 * (a range query's points sit on its step grid); null with fewer than two points.
 */
export function inferStep(lines: readonly SeriesLine[]): number | null {
  let step = Infinity;
  for (const l of lines)
    for (let i = 1; i < l.points.length; i++) step = Math.min(step, l.points[i]![0] - l.points[i - 1]![0]);
  return Number.isFinite(step) && step > 0 ? step : null;
}

/**
 * Merges lines into rows sorted by time; a missing point stays `null` (a gap, never a 0). Where a
 * line skips steps — Prometheus had no sample for it (scrapes failed, the app was down) — a `null`
 * is put one step after its last point, so the chart breaks the line instead of drawing across.
 */
export function toRows(lines: readonly SeriesLine[]): Row[] {
  const byT = new Map<number, Row>();
  const put = (t: number, i: number, v: number | null) => {
    let row = byT.get(t);
    if (!row) {
      row = { t } as Row;
      byT.set(t, row);
    }
    row[seriesKey(i)] = v !== null && Number.isFinite(v) ? v : null;
  };
  const step = inferStep(lines);
  lines.forEach((line, i) => {
    const pts = [...line.points].sort((a, b) => a[0] - b[0]);
    pts.forEach(([t, v], j) => {
      const prev = pts[j - 1];
      if (step !== null && prev && t - prev[0] > 1.5 * step) put(prev[0] + step, i, null);
      put(t, i, v);
    });
  });
  return [...byT.values()].sort((a, b) => a.t - b.t);
}

/** Legend statistics of one line over its non-null points; all null when it has none. */
export function lineStats(line: SeriesLine): { last: number | null; max: number | null; mean: number | null } {
  const vals = line.points.map((p) => p[1]).filter((v): v is number => v !== null && Number.isFinite(v));
  if (vals.length === 0) return { last: null, max: null, mean: null };
  return {
    last: vals[vals.length - 1] ?? null,
    max: Math.max(...vals),
    mean: vals.reduce((a, b) => a + b, 0) / vals.length,
  };
}

/** True when no line has a single non-null point: the panel shows its empty state. */
export function hasNoData(lines: readonly SeriesLine[]): boolean {
  return lines.every((l) => l.points.every((p) => p[1] === null || !Number.isFinite(p[1])));
}

/**
 * Upper bound of the Y axis: the data maximum (summed when stacked) or the threshold, whichever is
 * higher, plus 15% headroom so the threshold label is readable. Never 0 (an empty axis collapses).
 */
export function yMax(
  rows: readonly Row[],
  keys: readonly string[],
  stacked: boolean,
  threshold: number | null,
  floor = 0,
): number {
  let max = 0;
  for (const r of rows) {
    if (stacked) {
      let s = 0;
      for (const k of keys) s += r[k] ?? 0;
      max = Math.max(max, s);
    } else {
      for (const k of keys) max = Math.max(max, r[k] ?? 0);
    }
  }
  const top = Math.max(max, threshold ?? 0, floor);
  return top > 0 ? top * 1.15 : 1;
}

/**
 * Legend names: when the lines differ by exactly one label (result, reason, quantile…), that
 * label's value is the clearest name; otherwise the API's name.
 */
export function displayNames(lines: readonly SeriesLine[]): string[] {
  if (lines.length < 2) return lines.map((l) => l.name);
  const keys = new Set(lines.flatMap((l) => Object.keys(l.labels)));
  const varying = [...keys].filter((k) => new Set(lines.map((l) => l.labels[k] ?? "")).size > 1);
  if (varying.length !== 1) return lines.map((l) => l.name);
  const k = varying[0]!;
  return lines.map((l) => l.labels[k] ?? l.name);
}

/**
 * Ticks of a Y axis from 0 to at least `top`: about `target` intervals of a round step (1, 2 or 5 ×
 * 10ⁿ in the unit the axis is read in — percent for a ratio, ms for seconds), and the last tick ≥
 * `top` becomes the axis' top. recharts' own ticks on a fixed domain split it evenly
 * (0, 4.5, 9, 14, 17 %); these read 0, 5, 10, 15, 20 %. `scale` converts to the read unit
 * (100 for a ratio). Returns the ticks (API unit) and the step between them.
 */
export function niceTicks(top: number, scale = 1, target = 4): { ticks: number[]; step: number } {
  const t = top > 0 && Number.isFinite(top) ? top * scale : 1;
  const raw = t / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const stepRead = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const n = Math.max(1, Math.ceil(t / stepRead - 1e-9));
  const clean = (x: number) => Number(x.toPrecision(12));
  const ticks = Array.from({ length: n + 1 }, (_, i) => clean((i * stepRead) / scale));
  return { ticks, step: clean(stepRead / scale) };
}

/**
 * What each `cause` of `messages_duplicates_by_cause_total` means, with its colour on the handler
 * page's "Duplicates by cause" chart. Keys are the label values of server/dedup/metrics/metrics.ts
 * `DUPLICATE_CAUSE` (chart-data.test.ts checks they agree).
 */
export const DUPLICATE_CAUSE_LEGEND: Readonly<Record<string, { color: string; title: string; text: string }>> = {
  redelivery: {
    color: "#2563eb",
    title: "redelivery",
    text: "the same Kafka position (topic:partition:offset) seen again: a retry, a rebalance, or a restart before the offset commit. Look at the consumer: commits, rebalances, crashes.",
  },
  republish: {
    color: "#f59e0b",
    title: "republish",
    text: "the same message UUID at a new position: a producer retry, an outbox forwarder sending again, a DLQ replay. Look at the publisher.",
  },
  unknown: {
    color: "#94a3b8",
    title: "unknown",
    text: "no first position to compare: a key written before positions were stored, the release / naive markings, or a message without a position.",
  },
};
