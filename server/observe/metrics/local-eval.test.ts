import { describe, expect, it } from "vitest";
import { METRIC_NAMES } from "@/names/dedup";
import { evaluate } from "./local-eval";
import { histogramQuantile, rateAt, seriesKey, type Snapshot } from "./local-promql";

function snap(t: number, values: Array<[string, Record<string, string>, number]>): Snapshot {
  return {
    t,
    series: new Map(values.map(([name, labels, value]) => [seriesKey(name, labels), { name, labels, value }])),
  };
}

describe("rateAt", () => {
  it("is the per-second increase over the window and survives a counter reset", () => {
    const l = { service: "s" };
    const snaps = [
      snap(0, [["c", l, 0]]),
      snap(10_000, [["c", l, 100]]),
      snap(20_000, [["c", l, 10]]),
      snap(30_000, [["c", l, 60]]),
    ];
    // increase 100 + 10 (reset: counts from 0) + 50 = 160 over 30 s
    const [r] = rateAt(snaps, "c", 30_000, 300_000);
    expect(r!.rate).toBeCloseTo(160 / 30, 6);
  });

  it("needs two samples inside the window", () => {
    const snaps = [snap(0, [["c", {}, 5]]), snap(400_000, [["c", {}, 9]])];
    expect(rateAt(snaps, "c", 400_000, 300_000)).toEqual([]);
  });
});

describe("histogramQuantile", () => {
  it("interpolates inside the bucket like PromQL", () => {
    const b = [
      { le: 0.01, count: 50 },
      { le: 0.05, count: 90 },
      { le: 0.1, count: 100 },
      { le: Infinity, count: 100 },
    ];
    expect(histogramQuantile(0.5, b)).toBeCloseTo(0.01, 9);
    // rank 99 lies in (0.05, 0.1]: 0.05 + 0.05 * (99-90)/10
    expect(histogramQuantile(0.99, b)).toBeCloseTo(0.095, 9);
  });

  it("answers the highest finite bound for the +Inf bucket and null without data", () => {
    expect(
      histogramQuantile(0.99, [
        { le: 0.1, count: 0 },
        { le: Infinity, count: 10 },
      ]),
    ).toBe(0.1);
    expect(
      histogramQuantile(0.99, [
        { le: 0.1, count: 0 },
        { le: Infinity, count: 0 },
      ]),
    ).toBeNull();
  });
});

describe("payload_conflicts (DedupPayloadConflict's value)", () => {
  it("is the count over the window per service and handler: one conflict is 1 while the window holds it, then 0", () => {
    const l = { service: "s", handler: "h" };
    const c = METRIC_NAMES.payloadConflicts;
    const snaps = [
      snap(0, [[c, l, 0]]),
      snap(10_000, [[c, l, 0]]),
      snap(20_000, [[c, l, 1]]),
      snap(400_000, [[c, l, 1]]),
      snap(410_000, [[c, l, 1]]),
    ];
    expect(evaluate(snaps, "payload_conflicts", 20_000)).toEqual([{ labels: l, value: 1 }]);
    expect(evaluate(snaps, "payload_conflicts", 410_000)).toEqual([{ labels: l, value: 0 }]);
  });
});

describe("now beside the window (error_rate_now, check_p99_now, duplicate_ratio_now)", () => {
  const l = { service: "s" };
  const e = (t: number, v: number) => snap(t, [[METRIC_NAMES.errors, { ...l, reason: "redis_conn" }, v]]);

  it("reads only the last two samples: after an outage's errors stop, now is 0 while the 5-min rate still holds them", () => {
    const snaps = [e(0, 0), e(5_000, 50), e(10_000, 100), e(15_000, 100), e(20_000, 100)];
    expect(evaluate(snaps, "error_rate", 20_000)[0]!.value).toBeCloseTo(100 / 20, 6);
    expect(evaluate(snaps, "error_rate_now", 20_000)).toEqual([
      { labels: { service: "s", reason: "redis_conn" }, value: 0 },
    ]);
    // One scrape earlier the last interval still held errors (10 → 15 s: none; 5 → 10 s: 50).
    expect(evaluate(snaps, "error_rate_now", 10_000)[0]!.value).toBeCloseTo(50 / 5, 3);
  });

  it("has no value without two samples within the last minute (no stale figure)", () => {
    const snaps = [e(0, 0), e(5_000, 10), e(200_000, 10)];
    expect(evaluate(snaps, "error_rate_now", 200_000)).toEqual([]);
    expect(evaluate(snaps, "error_rate_now", 5_000)).toHaveLength(1);
  });

  it("the check p99 and the duplicate ratio of the last interval", () => {
    const h = METRIC_NAMES.checkDuration;
    const b = (t: number, slow: number, fast: number) =>
      snap(t, [
        [`${h}_bucket`, { ...l, le: "0.01" }, fast],
        [`${h}_bucket`, { ...l, le: "1" }, fast + slow],
        [`${h}_bucket`, { ...l, le: "+Inf" }, fast + slow],
        [METRIC_NAMES.deduplicated, { service: "s", topic: "t", handler: "h" }, slow],
        [METRIC_NAMES.processed, { service: "s", topic: "t", handler: "h", result: "success" }, fast + slow],
      ]);
    // 100 slow checks in the first interval, then only fast ones.
    const snaps = [b(0, 0, 0), b(5_000, 100, 0), b(10_000, 100, 100)];
    expect(evaluate(snaps, "check_p99", 10_000)[0]!.value!).toBeGreaterThan(0.5);
    expect(evaluate(snaps, "check_p99_now", 10_000)[0]!.value!).toBeLessThanOrEqual(0.01);
    expect(evaluate(snaps, "duplicate_ratio", 10_000)[0]!.value).toBeCloseTo(0.5, 6);
    expect(evaluate(snaps, "duplicate_ratio_now", 10_000)[0]!.value).toBe(0);
  });
});
