"use client";

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCount } from "@/lib/format";

/** A bar chart of labelled counts (TTL distribution buckets). Part of the one recharts wrapper. */
export function BucketChart({ buckets, label, unit = "keys", height = 180, testId }: { buckets: readonly { label: string; count: number }[]; label: string; unit?: string; height?: number; testId?: string }) {
  return (
    <figure data-testid={testId} aria-label={label} className="text-slate-500 dark:text-slate-400">
      <div style={{ height }} role="img" aria-label={`${label}: ${buckets.map((b) => `${b.label} ${formatCount(b.count, unit)}`).join(", ")}`}>
        <ResponsiveContainer width="100%" height="100%" minWidth={0} initialDimension={{ width: 600, height }}>
          <BarChart data={buckets as { label: string; count: number }[]} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" className="chart-grid" vertical={false} />
            <XAxis dataKey="label" tick={{ fill: "currentColor", fontSize: 11 }} interval={0} />
            <YAxis allowDecimals={false} tick={{ fill: "currentColor", fontSize: 11 }} width={64} tickFormatter={(v: number) => formatCount(v, "").trim()} />
            <Tooltip formatter={(v) => [formatCount(Number(v), unit), "keys"]} wrapperClassName="chart-tooltip" isAnimationActive={false} />
            <Bar dataKey="count" fill="#2563eb" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
