import { describe, expect, it } from "vitest";
import type { SeriesLine } from "@/lib/api/series";
import { handlerTimeSummary } from "./handler-time";

const line = (name: string, values: Array<number | null>): SeriesLine => ({ name, labels: { service: "s", handler: "h" }, points: values.map((v, i) => [1000 + i, v]) });

describe("handlerTimeSummary", () => {
  it("takes the last p50 and p99 and compares the p99 with half the lease", () => {
    const s = handlerTimeSummary([line("p50 s / h", [0.1, 0.2]), line("p99 s / h", [40, 31, null])], 60_000);
    expect(s).toEqual({ p50: 0.2, p99: 31, leaseMs: 60_000, halfLeaseSeconds: 30, nearLease: true });
    expect(handlerTimeSummary([line("p99 s / h", [29])], 60_000).nearLease).toBe(false);
  });

  it("without data or without a declared lease it says nothing is near", () => {
    expect(handlerTimeSummary([], 60_000)).toMatchObject({ p50: null, p99: null, nearLease: false });
    expect(handlerTimeSummary([line("p99 s / h", [99])], null)).toMatchObject({ p99: 99, halfLeaseSeconds: null, nearLease: false });
  });
});
