/**
 * What a time-series chart shows besides its plot, shared by the server-drawn chart
 * (static-chart.tsx) and the interactive one (time-series-chart.tsx, recharts): the line colours and
 * the Grafana-style legend table with last / max / mean. No recharts here: this module is in the
 * page's first chunk and renders on the server.
 */
import type { ChartMarker } from "./markers";
import type { SeriesLine } from "@/lib/api/series";
import { displayNames, lineStats, niceTicks, seriesKey, toRows, yMax } from "@/lib/chart-data";
import {
  formatBurst,
  formatByUnit,
  formatClock,
  formatClockSeconds,
  formatTick,
  tickScale,
  type ValueUnit,
} from "@/lib/format";

/** Line colours, readable on white and on slate-900. */
export const PALETTE = ["#2563eb", "#f59e0b", "#10b981", "#a855f7", "#ef4444", "#06b6d4", "#ec4899", "#84cc16"];

/** A horizontal threshold drawn across the chart. */
export interface ChartThreshold {
  value: number;
  label: string;
}

/** Props of {@link TimeSeriesChart}. */
export interface TimeSeriesChartProps {
  lines: readonly SeriesLine[];
  unit: ValueUnit;
  /** Accessible name of the chart, e.g. "Duplicate ratio of notification/on-review-created". */
  label: string;
  /** The alert threshold: dashed red line, always inside the Y axis. */
  alert?: ChartThreshold | null;
  /** The normal band from 0 up to `value`: a green area. */
  normal?: ChartThreshold | null;
  /** Stack the series as areas (error reasons, results). */
  stacked?: boolean;
  height?: number;
  /** Show the date on the time axis (ranges of a day or more). */
  withDate?: boolean;
  /** Fixed colours per series name (e.g. result → colour). */
  colors?: Record<string, string>;
  testId?: string;
  /**
   * Rates of rare events (errors, DLQ, duplicates): the legend adds a column with the last rate as
   * a count over this window (`1 error in 5 min`), what `increase()` would read.
   */
  burst?: { windowMs: number; what: string } | null;
  /** Events drawn as vertical lines with a hover text (alert transitions, rebalances, toggles…), at most 50. */
  markers?: readonly ChartMarker[];
}

/**
 * What both drawings of a chart compute from their props: rows, series keys, the Y axis (round
 * ticks that include the threshold), which series are drawn with dots, legend names, colours and
 * the tick formatters.
 */
export function chartModel({
  lines,
  unit,
  alert = null,
  normal = null,
  stacked = false,
  withDate = false,
  colors = {},
}: Pick<TimeSeriesChartProps, "lines" | "unit" | "alert" | "normal" | "stacked" | "withDate" | "colors">) {
  const rows = toRows(lines);
  const keys = lines.map((_, i) => seriesKey(i));
  // Round ticks (0, 5, 10, 15 %) with the decimals their step needs; the last tick is the top.
  const axis = niceTicks(yMax(rows, keys, stacked, alert?.value ?? null, normal?.value ?? 0), tickScale(unit));
  const top = axis.ticks[axis.ticks.length - 1] ?? 1;
  // A series with a handful of points (a fresh process, a long range) is drawn with dots: a line needs two.
  const sparse = lines.map((l) => l.points.filter((p) => p[1] !== null).length <= 3);
  const names = displayNames(lines);
  const color = (i: number) => seriesColor(colors, names, i);
  const ticks = (v: number) => formatTick(v, unit, axis.step);
  // Over a few minutes (a fresh process) minutes repeat on the axis: show seconds.
  const span = rows.length > 1 ? rows[rows.length - 1]!.t - rows[0]!.t : 0;
  const clock = (t: number) => (span > 0 && span < 600 ? formatClockSeconds(t) : formatClock(t, withDate));
  return { rows, keys, axis, top, sparse, names, color, ticks, clock };
}

/** The colour of series `i`: its fixed colour by display name, else the palette's. */
export function seriesColor(colors: Record<string, string>, names: readonly string[], i: number): string {
  return colors[names[i] ?? ""] ?? PALETTE[i % PALETTE.length] ?? "#2563eb";
}

/** The legend table under a chart: one row per series with its last, max and mean. */
export function ChartLegend({
  lines,
  names,
  colorOf,
  unit,
  label,
  burst,
}: {
  lines: readonly SeriesLine[];
  names: readonly string[];
  colorOf: (i: number) => string;
  unit: ValueUnit;
  label: string;
  burst: { windowMs: number; what: string } | null;
}) {
  const fmt = (v: number | null) => (typeof v === "number" ? formatByUnit(v, unit) : "—");
  return (
    <figcaption className="mt-1">
      <table className="w-full text-xs">
        <caption className="sr-only">{label}: last, max and mean per series</caption>
        <thead>
          <tr className="text-left">
            <th scope="col" className="font-normal">
              Series
            </th>
            <th scope="col" className="text-right font-normal">
              Last
            </th>
            <th scope="col" className="text-right font-normal">
              Max
            </th>
            <th scope="col" className="text-right font-normal">
              Mean
            </th>
            {burst ? (
              <th scope="col" className="text-right font-normal">
                Last as a count
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody className="text-slate-700 dark:text-slate-200">
          {lines.map((l, i) => {
            const s = lineStats(l);
            return (
              <tr key={seriesKey(i)} data-testid="legend-row">
                {/* The name wraps rather than being cut: "redis_conn" and "redis_timeout" differ only at the end. */}
                <td className="min-w-[7rem] [overflow-wrap:anywhere]" data-testid="legend-name">
                  <span
                    aria-hidden
                    className="mr-1 inline-block h-2 w-3 rounded-sm align-middle"
                    style={{ background: colorOf(i) }}
                  />
                  <span title={l.name}>{names[i]}</span>
                </td>
                <td className="whitespace-nowrap pl-2 text-right tabular-nums">{fmt(s.last)}</td>
                <td className="whitespace-nowrap pl-2 text-right tabular-nums">{fmt(s.max)}</td>
                <td className="whitespace-nowrap pl-2 text-right tabular-nums">{fmt(s.mean)}</td>
                {burst ? (
                  <td className="text-right tabular-nums" data-testid="legend-burst">
                    {formatBurst(s.last, burst.windowMs, burst.what) ?? "—"}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </figcaption>
  );
}
