/**
 * The server's drawing of a time-series chart: the same rows, Y axis, threshold,
 * normal band, colours and legend as the interactive chart (time-series-chart.tsx), as plain SVG
 * and HTML that `renderToString` can produce — recharts 3 renders nothing on the server
 * (recharts#5997). The page's HTML thus carries every line of the prefetched series; the
 * interactive chart (tooltips, recharts' tick placement) replaces it once its chunk has loaded
 * (lazy.tsx). No recharts here: this module is in the page's first chunk.
 *
 * The plot is a 1000 × 1000 viewBox stretched over the plot area (`preserveAspectRatio="none"`) with
 * non-scaling strokes, so it needs no width on the server; tick labels are HTML placed in percent.
 */
import type { ReactNode } from "react";
import type { Row } from "@/lib/chart-data";
import { chartModel, ChartLegend, type TimeSeriesChartProps } from "./chart-common";

/** viewBox size of the plot (both axes). */
const V = 1000;
/** Left column for the Y tick labels, px (recharts' YAxis width in time-series-chart.tsx). */
const Y_AXIS_PX = 56;
/** Row under the plot for the time ticks, px. */
const X_AXIS_PX = 24;
/** Time ticks drawn (recharts keeps ≥ 40 px between its own). */
const X_TICKS = 4;

/** Consecutive non-null points of one series as `x,y` runs (a null is a gap, as in recharts' `connectNulls={false}`). */
function runs(rows: readonly Row[], key: string, x: (t: number) => number, y: (v: number) => number): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  for (const r of rows) {
    const v = r[key];
    if (v === null || v === undefined) {
      if (cur.length) out.push(cur);
      cur = [];
    } else cur.push(`${x(r.t).toFixed(1)},${y(v).toFixed(1)}`);
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Where a chart's values land in the viewBox: `x` of a time, `y` of a value, `pct` of a value as a CSS top. */
interface PlotScale {
  x: (t: number) => number;
  y: (v: number) => number;
  pct: (v: number) => string;
}

/** The scale of rows from their first to their last time, values from 0 to `top`. */
function plotScale(t0: number, t1: number, top: number): PlotScale {
  const x = (t: number) => (t1 > t0 ? ((t - t0) / (t1 - t0)) * V : V / 2);
  const y = (v: number) => V - (Math.min(Math.max(v, 0), top) / top) * V;
  const pct = (v: number) => `${((y(v) / V) * 100).toFixed(2)}%`;
  return { x, y, pct };
}

/** Stacked areas: each series on top of the ones before it (a missing point counts 0 in the stack). */
function stackedPaths(rows: readonly Row[], keys: readonly string[], { x, y }: PlotScale) {
  const base = rows.map(() => 0);
  return keys.map((k) => {
    const lower = rows.map((r, j) => `${x(r.t).toFixed(1)},${y(base[j]!).toFixed(1)}`);
    const upper = rows.map((r, j) => {
      base[j] = base[j]! + (r[k] ?? 0);
      return `${x(r.t).toFixed(1)},${y(base[j]!).toFixed(1)}`;
    });
    return { upper, area: [...upper, ...lower.reverse()].join(" ") };
  });
}

/** The times of the {@link X_TICKS} time ticks (one for a single row, none without rows). */
function timeTicksOf(rows: readonly Row[], t0: number, t1: number): number[] {
  return t1 > t0
    ? Array.from({ length: X_TICKS }, (_, i) => t0 + ((t1 - t0) * (i + 0.5)) / X_TICKS)
    : rows.length
      ? [t0]
      : [];
}

/** The series as SVG: stacked areas with their upper line, or lines (a dot for a lone point or a sparse series). */
function StaticSeries({
  rows,
  keys,
  stacked,
  sparse,
  color,
  scale,
}: {
  rows: readonly Row[];
  keys: readonly string[];
  stacked: boolean;
  sparse: readonly boolean[];
  color: (i: number) => string;
  scale: PlotScale;
}) {
  if (stacked)
    return stackedPaths(rows, keys, scale).map((p, i) => (
      <g key={keys[i]}>
        <polygon points={p.area} fill={color(i)} fillOpacity={0.35} stroke="none" />
        <polyline
          points={p.upper.join(" ")}
          fill="none"
          stroke={color(i)}
          strokeWidth={2}
          vectorEffect="non-scaling-stroke"
          data-static-line
        />
      </g>
    ));
  return keys.map((k, i) =>
    runs(rows, k, scale.x, scale.y).map((run, r) =>
      sparse[i] || run.length === 1 ? (
        // A dot: a zero-length path with a round cap (non-scaling, so it stays round).
        <path
          key={`${k}-${r}`}
          d={run.map((pt) => `M${pt}h0`).join("")}
          stroke={color(i)}
          strokeWidth={6}
          strokeLinecap="round"
          vectorEffect="non-scaling-stroke"
          data-static-line
        />
      ) : (
        <polyline
          key={`${k}-${r}`}
          points={run.join(" ")}
          fill="none"
          stroke={color(i)}
          strokeWidth={2}
          strokeLinejoin="round"
          vectorEffect="non-scaling-stroke"
          data-static-line
        />
      ),
    ),
  );
}

/** The plot's SVG: grid, normal band, the series, the alert line. */
function StaticPlot({
  gridTicks,
  normal,
  alert,
  y,
  children,
}: {
  gridTicks: readonly number[];
  normal: TimeSeriesChartProps["normal"];
  alert: TimeSeriesChartProps["alert"];
  y: (v: number) => number;
  children: ReactNode;
}) {
  return (
    <svg
      viewBox={`0 0 ${V} ${V}`}
      preserveAspectRatio="none"
      width="100%"
      height="100%"
      className="overflow-visible"
      aria-hidden
    >
      {gridTicks.map((v) => (
        <line
          key={v}
          x1={0}
          x2={V}
          y1={y(v)}
          y2={y(v)}
          stroke="currentColor"
          strokeOpacity={0.25}
          strokeDasharray="3 3"
          vectorEffect="non-scaling-stroke"
          className="chart-grid"
        />
      ))}
      {normal && normal.value > 0 ? (
        <rect
          x={0}
          width={V}
          y={y(normal.value)}
          height={V - y(normal.value)}
          fill="#10b981"
          fillOpacity={0.12}
          className="threshold-normal"
        />
      ) : null}
      {children}
      {alert ? (
        <line
          x1={0}
          x2={V}
          y1={y(alert.value)}
          y2={y(alert.value)}
          stroke="#dc2626"
          strokeWidth={1.5}
          strokeDasharray="6 4"
          vectorEffect="non-scaling-stroke"
          className="threshold-alert"
        />
      ) : null}
    </svg>
  );
}

/** A time-series chart drawn without recharts (server render and first client render). */
export function StaticTimeSeriesChart({
  lines,
  unit,
  label,
  alert = null,
  normal = null,
  stacked = false,
  height = 180,
  withDate = false,
  colors = {},
  testId,
  burst = null,
}: TimeSeriesChartProps) {
  const { rows, keys, axis, top, sparse, names, color, ticks, clock } = chartModel({
    lines,
    unit,
    alert,
    normal,
    stacked,
    withDate,
    colors,
  });
  const t0 = rows[0]?.t ?? 0;
  const t1 = rows[rows.length - 1]?.t ?? t0;
  const scale = plotScale(t0, t1, top);
  const { x, pct } = scale;
  const plotH = height - 8 - X_AXIS_PX;
  return (
    <figure data-testid={testId} aria-label={label} data-drawn="server" className="text-slate-500 dark:text-slate-400">
      <div
        style={{ height }}
        role="img"
        aria-label={`${label} chart${alert ? `, alert threshold ${alert.label}` : ""}${normal ? `, normal band ${normal.label}` : ""}`}
        className="relative text-[11px]"
      >
        <div className="absolute" style={{ left: Y_AXIS_PX, right: 12, top: 8, height: plotH }}>
          <StaticPlot gridTicks={axis.ticks} normal={normal} alert={alert} y={scale.y}>
            <StaticSeries rows={rows} keys={keys} stacked={stacked} sparse={sparse} color={color} scale={scale} />
          </StaticPlot>
          {alert ? (
            <span className="absolute right-1 -translate-y-full text-red-600" style={{ top: pct(alert.value) }}>
              {alert.label}
            </span>
          ) : null}
          {normal && normal.value > 0 ? (
            <span className="absolute bottom-0 left-1 text-emerald-600">{normal.label}</span>
          ) : null}
          {timeTicksOf(rows, t0, t1).map((t) => (
            <span
              key={t}
              className="absolute -translate-x-1/2 whitespace-nowrap"
              style={{ left: `${((x(t) / V) * 100).toFixed(2)}%`, top: plotH + 6 }}
            >
              {clock(t)}
            </span>
          ))}
        </div>
        <div className="absolute left-0 top-2" style={{ width: Y_AXIS_PX - 6, height: plotH }}>
          {axis.ticks.map((v) => (
            <span key={v} className="absolute right-0 -translate-y-1/2 tabular-nums" style={{ top: pct(v) }}>
              {ticks(v)}
            </span>
          ))}
        </div>
      </div>
      <ChartLegend lines={lines} names={names} colorOf={color} unit={unit} label={label} burst={burst} />
    </figure>
  );
}
