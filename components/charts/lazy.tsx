"use client";

/**
 * The chart components, loaded as their own chunk: recharts (with its d3, redux and decimal
 * dependencies) is ~130 KiB gzip, more than the rest of a page. Split off, the page shell, status
 * strip, alerts and numbers paint first; both chunks are requested as soon as this module evaluates
 * (hydration), in parallel with the data requests, not when the first series arrives.
 */
import dynamic from "next/dynamic";
import { LoadingState } from "../panel";

const loadTimeSeries = () => import("./time-series-chart");
const loadBuckets = () => import("./bucket-chart");

if (typeof window !== "undefined") {
  void loadTimeSeries();
  void loadBuckets();
}

/** {@link import("./time-series-chart").TimeSeriesChart}, code-split. */
export const TimeSeriesChart = dynamic(() => loadTimeSeries().then((m) => m.TimeSeriesChart), {
  ssr: false,
  loading: () => <LoadingState label="Drawing chart…" height={200} />,
});

/** {@link import("./bucket-chart").BucketChart}, code-split. */
export const BucketChart = dynamic(() => loadBuckets().then((m) => m.BucketChart), {
  ssr: false,
  loading: () => <LoadingState label="Drawing chart…" height={180} />,
});
