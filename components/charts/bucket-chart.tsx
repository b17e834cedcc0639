"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { KEY_STATE_LABELS } from "@/lib/api/common";
import { formatCount } from "@/lib/format";

/** Colours of the two parts of a bucket: settled keys and `processing` leases. */
export const BUCKET_COLORS = { settled: "#2563eb", processing: "#f59e0b" } as const;

/**
 * A bar chart of labelled counts (TTL distribution buckets). When a bucket says how many of its
 * keys are `processing` leases, the bar is stacked: settled keys, then leases (amber), so
 * in-flight or abandoned claims never pass for the handler's window. Part of the one recharts wrapper.
 */
export function BucketChart({
  buckets,
  label,
  unit = "keys",
  height = 180,
  testId,
}: {
  buckets: readonly { label: string; count: number; processing?: number }[];
  label: string;
  unit?: string;
  height?: number;
  testId?: string;
}) {
  const split = buckets.some((b) => (b.processing ?? 0) > 0);
  const rows = buckets.map((b) => ({
    label: b.label,
    settled: b.count - (b.processing ?? 0),
    processing: b.processing ?? 0,
  }));
  const text = buckets
    .map(
      (b) =>
        `${b.label} ${formatCount(b.count, unit)}${split && b.processing ? ` (${formatCount(b.processing, "processing")})` : ""}`,
    )
    .join(", ");
  return (
    <figure data-testid={testId} aria-label={label} className="text-slate-500 dark:text-slate-400">
      <div style={{ height }} role="img" aria-label={`${label}: ${text}`}>
        <ResponsiveContainer width="100%" height="100%" minWidth={0} initialDimension={{ width: 600, height }}>
          <BarChart data={rows} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" className="chart-grid" vertical={false} />
            <XAxis dataKey="label" tick={{ fill: "currentColor", fontSize: 11 }} interval={0} />
            <YAxis
              allowDecimals={false}
              tick={{ fill: "currentColor", fontSize: 11 }}
              width={64}
              tickFormatter={(v: number) => formatCount(v, "").trim()}
            />
            <Tooltip
              formatter={(v, name) => [
                formatCount(Number(v), unit),
                name === "processing" ? KEY_STATE_LABELS.processing : split ? "done / settled" : "keys",
              ]}
              wrapperClassName="chart-tooltip"
              isAnimationActive={false}
            />
            {split ? (
              <Legend
                formatter={(v: string) => (v === "processing" ? KEY_STATE_LABELS.processing : "done / settled")}
                wrapperStyle={{ fontSize: 11 }}
              />
            ) : null}
            <Bar dataKey="settled" stackId="k" fill={BUCKET_COLORS.settled} isAnimationActive={false} />
            {split ? (
              <Bar
                dataKey="processing"
                stackId="k"
                fill={BUCKET_COLORS.processing}
                isAnimationActive={false}
                className="bucket-processing"
              />
            ) : null}
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
