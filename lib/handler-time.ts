/**
 * What the handler page says about a handler's time against its lease: the last p50 / p99 of one
 * attempt (the `handler_time` series) next to the declared `leaseMs`, and whether the p99 passed
 * half the lease (where the lint warns that a lease takeover is near). Isomorphic and pure.
 */
import type { SeriesLine } from "@/lib/api/series";
import { lineStats } from "./chart-data";

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
  return { p50, p99, leaseMs, halfLeaseSeconds, nearLease: p99 !== null && halfLeaseSeconds !== null && p99 > halfLeaseSeconds };
}
