"use client";

/**
 * The one wrapper of recharts for time series: lines or stacked areas, an alert threshold as a
 * dashed ReferenceLine, a "normal" band as a ReferenceArea, a Y axis that always includes the
 * threshold (grafana#12135), and a Grafana-style legend table with last / max / mean.
 */
import {
  Area,
  AreaChart,
  CartesianGrid,
  Line,
  LineChart,
  ReferenceArea,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { formatByUnit, formatClock } from "@/lib/format";
import { chartModel, ChartLegend, type ChartThreshold, type TimeSeriesChartProps } from "./chart-common";
import { MarkerFlag, MarkerLegend } from "./markers";
import { MARKER_INFO } from "@/lib/api/events";

/** A time-series chart with thresholds and a legend table. Renders nothing special for empty input: callers show an empty state. */
export function TimeSeriesChart({
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
  markers = [],
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
  // Stacked series are areas, others lines; grid, axes, tooltip and thresholds are the same in both.
  const Chart = stacked ? AreaChart : LineChart;
  const dot = (i: number) => (sparse[i] ? { r: 3, fill: color(i) } : false);
  const fmt = (v: unknown) => (typeof v === "number" ? formatByUnit(v, unit) : "—");
  const grid = <CartesianGrid strokeDasharray="3 3" className="chart-grid" vertical={false} />;
  const xAxis = timeAxis(clock);
  const yAxis = valueAxis(top, axis.ticks, ticks);
  const tooltip = (
    <Tooltip
      formatter={(v, _n, item) => [fmt(v), names[Number(String(item.dataKey).slice(1))] ?? ""]}
      labelFormatter={(t) => (typeof t === "number" ? formatClock(t, true) : "")}
      wrapperClassName="chart-tooltip"
      isAnimationActive={false}
    />
  );
  const refs = referenceMarks(normal, alert, markers);
  return (
    <figure data-testid={testId} aria-label={label} className="text-slate-500 dark:text-slate-400">
      <div
        style={{ height }}
        role="img"
        aria-label={`${label} chart${alert ? `, alert threshold ${alert.label}` : ""}${normal ? `, normal band ${normal.label}` : ""}`}
      >
        <ResponsiveContainer width="100%" height="100%" minWidth={0} initialDimension={{ width: 600, height }}>
          <Chart data={rows} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
            {grid}
            {xAxis}
            {yAxis}
            {tooltip}
            {refs}
            {seriesMarks(keys, stacked, color, dot)}
          </Chart>
        </ResponsiveContainer>
      </div>
      <ChartLegend lines={lines} names={names} colorOf={color} unit={unit} label={label} burst={burst} />
      <MarkerLegend markers={markers} />
    </figure>
  );
}

/** The time axis: the rows' times, recharts' own tick placement at least 40 px apart. */
function timeAxis(clock: (t: number) => string) {
  return (
    <XAxis
      dataKey="t"
      type="number"
      scale="time"
      domain={["dataMin", "dataMax"]}
      tickFormatter={clock}
      tick={{ fill: "currentColor", fontSize: 11 }}
      minTickGap={40}
    />
  );
}

/** The value axis: from 0 to the top tick, every round tick labelled. */
function valueAxis(top: number, axisTicks: number[], ticks: (v: number) => string) {
  return (
    <YAxis
      domain={[0, top]}
      ticks={axisTicks}
      interval={0}
      tickFormatter={ticks}
      tick={{ fill: "currentColor", fontSize: 11 }}
      width={56}
      allowDataOverflow={false}
    />
  );
}

/** The normal band, the alert line and the event markers (the last 50), as recharts reference marks. */
function referenceMarks(
  normal: ChartThreshold | null,
  alert: ChartThreshold | null,
  markers: NonNullable<TimeSeriesChartProps["markers"]>,
) {
  return (
    <>
      {normal && normal.value > 0 ? (
        <ReferenceArea
          y1={0}
          y2={normal.value}
          fill="#10b981"
          fillOpacity={0.12}
          stroke="none"
          ifOverflow="extendDomain"
          label={{ value: normal.label, position: "insideBottomLeft", fill: "#059669", fontSize: 11 }}
          className="threshold-normal"
        />
      ) : null}
      {alert ? (
        <ReferenceLine
          y={alert.value}
          stroke="#dc2626"
          strokeDasharray="6 4"
          strokeWidth={1.5}
          ifOverflow="extendDomain"
          label={{ value: alert.label, position: "insideBottomRight", fill: "#dc2626", fontSize: 11 }}
          className="threshold-alert"
        />
      ) : null}
      {markers.slice(-50).map((m, i) => (
        <ReferenceLine
          key={`m${i}`}
          x={m.t}
          stroke={MARKER_INFO[m.kind].color}
          strokeDasharray="2 3"
          strokeWidth={1}
          ifOverflow="extendDomain"
          label={<MarkerFlag marker={m} />}
          className="chart-marker"
        />
      ))}
    </>
  );
}

/** One area per series when stacked, else one line per series. */
function seriesMarks(
  keys: readonly string[],
  stacked: boolean,
  color: (i: number) => string,
  dot: (i: number) => false | { r: number; fill: string },
) {
  return keys.map((k, i) =>
    stacked ? (
      <Area
        key={k}
        type="monotone"
        dataKey={k}
        stackId="1"
        stroke={color(i)}
        fill={color(i)}
        fillOpacity={0.35}
        dot={dot(i)}
        isAnimationActive={false}
        connectNulls={false}
      />
    ) : (
      <Line
        key={k}
        type="monotone"
        dataKey={k}
        stroke={color(i)}
        strokeWidth={2}
        dot={dot(i)}
        isAnimationActive={false}
        connectNulls={false}
      />
    ),
  );
}
