"use client";

/**
 * The chart components, loaded as their own chunk: recharts (with its d3, redux and decimal
 * dependencies) is ~130 KiB gzip, more than the rest of a page. Split off, the page shell, status
 * strip, alerts and numbers paint first; both chunks are requested as soon as this module evaluates
 * (hydration), in parallel with the data requests, not when the first series arrives.
 *
 * A time-series chart is drawn by the server (static-chart.tsx: the prefetched series are in the
 * page's HTML, lines included) and stays that drawing until the recharts chunk has loaded; then the
 * interactive chart replaces it. The server's drawing is also what hydrates (the store's server
 * snapshot is "not loaded"), so hydration never meets recharts' different markup. If the chunk
 * cannot load, the drawing stays.
 */
import dynamic from "next/dynamic";
import { createContext, useContext, useSyncExternalStore } from "react";
import { LoadingState } from "../panel";
import type { TimeSeriesChartProps } from "./chart-common";
import { StaticTimeSeriesChart } from "./static-chart";

type Interactive = typeof import("./time-series-chart").TimeSeriesChart;
let interactive: Interactive | null = null;
const listeners = new Set<() => void>();
const loadTimeSeries = () =>
  import("./time-series-chart").then((m) => {
    interactive = m.TimeSeriesChart;
    for (const l of listeners) l();
    return m;
  });
const loadBuckets = () => import("./bucket-chart");

if (typeof window !== "undefined") {
  // A failed chunk leaves the server's drawing on screen; the next navigation tries again.
  void loadTimeSeries().catch(() => undefined);
  void loadBuckets().catch(() => undefined);
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

/**
 * Whether the charts below may turn interactive now (default yes); false keeps the server's drawing
 * for charts below the fold until they come near the viewport (components/overview/defer-mount.tsx).
 */
export const InteractiveCharts = createContext(true);

/** {@link import("./time-series-chart").TimeSeriesChart} once its chunk has loaded (and {@link InteractiveCharts} allows); the server's drawing of the same data until then. */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const Chart = useSyncExternalStore(
    subscribe,
    () => interactive,
    () => null,
  );
  const allowed = useContext(InteractiveCharts);
  return Chart && allowed ? <Chart {...props} /> : <StaticTimeSeriesChart {...props} />;
}

/** {@link import("./bucket-chart").BucketChart}, code-split. */
export const BucketChart = dynamic(() => loadBuckets().then((m) => m.BucketChart), {
  ssr: false,
  loading: () => <LoadingState label="Drawing chart…" height={180} />,
});
