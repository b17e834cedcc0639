/**
 * What the handler page says about a handler's time against its lease: the last p50 / p99 of one
 * attempt (the `handler_time` series) next to the declared `leaseMs`, and whether the p99 passed
 * half the lease (where the lint warns that a lease takeover is near). Isomorphic and pure.
 */
import type { SeriesLine } from "@/lib/api/series";
import { lineStats } from "./chart-data";
import { formatSeconds } from "./format";

/** The handler-time figures of one handler. */
export interface HandlerTimeSummary {
  /** Last p50 / p99 of one attempt, seconds; `null` without data. */
  p50: number | null;
  p99: number | null;
  /** Declared lease, ms; `null` when the handler is not declared. */
  leaseMs: number | null;
  /** Half the lease, seconds (the chart's line and the lint's limit); `null` without a lease. */
  halfLeaseSeconds: number | null;
  /** The last p99 is above half the lease. */
  nearLease: boolean;
}

/** Summarises the `p50` / `p99` lines of the `handler_time` series against `leaseMs`. */
export function handlerTimeSummary(lines: readonly SeriesLine[], leaseMs: number | null): HandlerTimeSummary {
  const last = (prefix: string) => {
    const line = lines.find((l) => l.name === prefix || l.name.startsWith(`${prefix} `));
    return line ? lineStats(line).last : null;
  };
  const p50 = last("p50");
  const p99 = last("p99");
  const halfLeaseSeconds = leaseMs === null ? null : leaseMs / 2000;
  return {
    p50,
    p99,
    leaseMs,
    halfLeaseSeconds,
    nearLease: p99 !== null && halfLeaseSeconds !== null && p99 > halfLeaseSeconds,
  };
}

/** How far above the largest point a threshold line may sit and still be drawn (the axis then stays readable). */
export const LINE_SCALE_MAX = 20;

/**
 * Whether the half-lease line belongs on the chart: drawn, it extends the axis to it, so a half
 * lease of 40 s above a p99 of 5 ms laid the data flat on zero. Off scale (more than
 * {@link LINE_SCALE_MAX} × the largest point), the chart says where it is instead.
 */
export function halfLeaseLine(
  halfLeaseSeconds: number | null,
  lines: readonly SeriesLine[],
): { draw: boolean; note: string | null } {
  if (halfLeaseSeconds === null) return { draw: false, note: null };
  const max = Math.max(0, ...lines.flatMap((l) => l.points.map((p) => p[1] ?? 0)));
  if (max === 0 || halfLeaseSeconds <= LINE_SCALE_MAX * max) return { draw: true, note: null };
  return {
    draw: false,
    note: `half the lease (${formatSeconds(halfLeaseSeconds)}) is ${Math.round(halfLeaseSeconds / max).toLocaleString("en-US")}× the highest point: off this scale`,
  };
}
