import { describe, expect, it } from "vitest";
import type { SeriesLine } from "@/lib/api/series";
import { halfLeaseLine, handlerTimeSummary } from "./handler-time";

const line = (name: string, values: Array<number | null>): SeriesLine => ({
  name,
  labels: { service: "s", handler: "h" },
  points: values.map((v, i) => [1000 + i, v]),
});

describe("handlerTimeSummary", () => {
  it("takes the last p50 and p99 and compares the p99 with half the lease", () => {
    const s = handlerTimeSummary([line("p50 s / h", [0.1, 0.2]), line("p99 s / h", [40, 31, null])], 60_000);
    expect(s).toEqual({ p50: 0.2, p99: 31, leaseMs: 60_000, halfLeaseSeconds: 30, nearLease: true });
    expect(handlerTimeSummary([line("p99 s / h", [29])], 60_000).nearLease).toBe(false);
  });

  it("without data or without a declared lease it says nothing is near", () => {
    expect(handlerTimeSummary([], 60_000)).toMatchObject({ p50: null, p99: null, nearLease: false });
    expect(handlerTimeSummary([line("p99 s / h", [99])], null)).toMatchObject({
      p99: 99,
      halfLeaseSeconds: null,
      nearLease: false,
    });
  });
});

describe("halfLeaseLine: the chart keeps its data readable", () => {
  it("a half lease of 40 s above a p99 of 5 ms is not drawn (it laid the data flat on zero); the chart says where it is", () => {
    const r = halfLeaseLine(40, [line("p50 s / h", [0.0025]), line("p99 s / h", [0.005, 0.00499])]);
    expect(r.draw).toBe(false);
    expect(r.note).toBe("half the lease (40 s) is 8,000× the highest point: off this scale");
  });
  it("a half lease within reach of the data is drawn, as is one beside no data; no lease, no line", () => {
    expect(halfLeaseLine(30, [line("p99 s / h", [29])])).toEqual({ draw: true, note: null });
    expect(halfLeaseLine(30, [])).toEqual({ draw: true, note: null });
    expect(halfLeaseLine(null, [line("p99 s / h", [29])])).toEqual({ draw: false, note: null });
  });
});
