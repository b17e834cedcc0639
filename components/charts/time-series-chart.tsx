"use client";

/**
 * The one wrapper of recharts for time series: lines or stacked areas, an alert threshold as a
 * dashed ReferenceLine, a "normal" band as a ReferenceArea, a Y axis that always includes the
 * threshold (grafana#12135), and a Grafana-style legend table with last / max / mean.
 */
import { Area, AreaChart, CartesianGrid, Line, LineChart, ReferenceArea, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { SeriesLine } from "@/lib/api-types";
import { formatBurst, formatByUnit, formatClock, formatClockSeconds, formatTick, tickScale, type ValueUnit } from "@/lib/format";
import { displayNames, lineStats, niceTicks, seriesKey, toRows, yMax } from "@/lib/chart-data";

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
}

/** A time-series chart with thresholds and a legend table. Renders nothing special for empty input: callers show an empty state. */
export function TimeSeriesChart({ lines, unit, label, alert = null, normal = null, stacked = false, height = 180, withDate = false, colors = {}, testId, burst = null }: TimeSeriesChartProps) {
  const rows = toRows(lines);
  const keys = lines.map((_, i) => seriesKey(i));
  // Round ticks (0, 5, 10, 15 %) with the decimals their step needs; the last tick is the top.
  const axis = niceTicks(yMax(rows, keys, stacked, alert?.value ?? null, normal?.value ?? 0), tickScale(unit));
  const top = axis.ticks[axis.ticks.length - 1] ?? 1;
  // A series with a handful of points (a fresh process, a long range) is drawn with dots: a line needs two.
  const sparse = lines.map((l) => l.points.filter((p) => p[1] !== null).length <= 3);
  const names = displayNames(lines);
  const color = (i: number) => colors[names[i] ?? ""] ?? PALETTE[i % PALETTE.length] ?? "#2563eb";
  const fmt = (v: unknown) => (typeof v === "number" ? formatByUnit(v, unit) : "—");
  const ticks = (v: number) => formatTick(v, unit, axis.step);
  // Over a few minutes (a fresh process) minutes repeat on the axis: show seconds.
  const span = rows.length > 1 ? rows[rows.length - 1]!.t - rows[0]!.t : 0;
  const clock = (t: number) => (span > 0 && span < 600 ? formatClockSeconds(t) : formatClock(t, withDate));
  const grid = <CartesianGrid strokeDasharray="3 3" className="chart-grid" vertical={false} />;
  const xAxis = (
    <XAxis dataKey="t" type="number" scale="time" domain={["dataMin", "dataMax"]} tickFormatter={clock} tick={{ fill: "currentColor", fontSize: 11 }} minTickGap={40} />
  );
  const yAxis = <YAxis domain={[0, top]} ticks={axis.ticks} interval={0} tickFormatter={ticks} tick={{ fill: "currentColor", fontSize: 11 }} width={56} allowDataOverflow={false} />;
  const tooltip = (
    <Tooltip
      formatter={(v, _n, item) => [fmt(v), names[Number(String(item.dataKey).slice(1))] ?? ""]}
      labelFormatter={(t) => (typeof t === "number" ? formatClock(t, true) : "")}
      wrapperClassName="chart-tooltip"
      isAnimationActive={false}
    />
  );
  const refs = (
    <>
      {normal && normal.value > 0 ? (
        <ReferenceArea y1={0} y2={normal.value} fill="#10b981" fillOpacity={0.12} stroke="none" ifOverflow="extendDomain" label={{ value: normal.label, position: "insideBottomLeft", fill: "#059669", fontSize: 11 }} className="threshold-normal" />
      ) : null}
      {alert ? (
        <ReferenceLine y={alert.value} stroke="#dc2626" strokeDasharray="6 4" strokeWidth={1.5} ifOverflow="extendDomain" label={{ value: alert.label, position: "insideBottomRight", fill: "#dc2626", fontSize: 11 }} className="threshold-alert" />
      ) : null}
    </>
  );
  return (
    <figure data-testid={testId} aria-label={label} className="text-slate-500 dark:text-slate-400">
      <div style={{ height }} role="img" aria-label={`${label} chart${alert ? `, alert threshold ${alert.label}` : ""}${normal ? `, normal band ${normal.label}` : ""}`}>
        <ResponsiveContainer width="100%" height="100%" minWidth={0} initialDimension={{ width: 600, height }}>
          {stacked ? (
            <AreaChart data={rows} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
              {grid}
              {xAxis}
              {yAxis}
              {tooltip}
              {refs}
              {keys.map((k, i) => (
                <Area key={k} type="monotone" dataKey={k} stackId="1" stroke={color(i)} fill={color(i)} fillOpacity={0.35} dot={sparse[i] ? { r: 3, fill: color(i) } : false} isAnimationActive={false} connectNulls={false} />
              ))}
            </AreaChart>
          ) : (
            <LineChart data={rows} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
              {grid}
              {xAxis}
              {yAxis}
              {tooltip}
              {refs}
              {keys.map((k, i) => (
                <Line key={k} type="monotone" dataKey={k} stroke={color(i)} strokeWidth={2} dot={sparse[i] ? { r: 3, fill: color(i) } : false} isAnimationActive={false} connectNulls={false} />
              ))}
            </LineChart>
          )}
        </ResponsiveContainer>
      </div>
      <figcaption className="mt-1">
        <table className="w-full text-xs">
          <caption className="sr-only">{label}: last, max and mean per series</caption>
          <thead>
            <tr className="text-left">
              <th scope="col" className="font-normal">Series</th>
              <th scope="col" className="text-right font-normal">Last</th>
              <th scope="col" className="text-right font-normal">Max</th>
              <th scope="col" className="text-right font-normal">Mean</th>
              {burst ? <th scope="col" className="text-right font-normal">Last as a count</th> : null}
            </tr>
          </thead>
          <tbody className="text-slate-700 dark:text-slate-200">
            {lines.map((l, i) => {
              const s = lineStats(l);
              return (
                <tr key={seriesKey(i)} data-testid="legend-row">
                  <td className="max-w-0 truncate">
                    <span aria-hidden className="mr-1 inline-block h-2 w-3 rounded-sm align-middle" style={{ background: color(i) }} />
                    <span title={l.name}>{names[i]}</span>
                  </td>
                  <td className="text-right tabular-nums">{fmt(s.last)}</td>
                  <td className="text-right tabular-nums">{fmt(s.max)}</td>
                  <td className="text-right tabular-nums">{fmt(s.mean)}</td>
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
    </figure>
  );
}
