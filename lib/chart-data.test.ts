import { describe, expect, it } from "vitest";
import { displayNames, hasNoData, lineStats, niceTicks, toRows, yMax } from "./chart-data";
import { formatTick } from "./format";

const line = (name: string, points: [number, number | null][]) => ({ name, labels: {}, points });

describe("chart data: gaps stay gaps, the threshold stays on the axis", () => {
  it("merges lines by time, a missing point is null not 0", () => {
    const rows = toRows([
      line("a", [
        [2, 0.5],
        [1, 0.25],
      ]),
      line("b.c", [
        [2, null],
        [3, 1],
      ]),
    ]);
    expect(rows).toEqual([
      { t: 1, s0: 0.25 },
      { t: 2, s0: 0.5, s1: null },
      { t: 3, s1: 1 },
    ]);
  });
  it("a line that skips steps (no samples: scrapes failed, app down) breaks with a null one step after its last point", () => {
    // Step 15 s; Prometheus returned nothing for 45..90 (four steps).
    const rows = toRows([
      line("a", [
        [0, 1],
        [15, 2],
        [30, 3],
        [105, 4],
        [120, 5],
      ]),
    ]);
    expect(rows).toEqual([
      { t: 0, s0: 1 },
      { t: 15, s0: 2 },
      { t: 30, s0: 3 },
      { t: 45, s0: null },
      { t: 105, s0: 4 },
      { t: 120, s0: 5 },
    ]);
    // Without a gap nothing is added.
    expect(
      toRows([
        line("a", [
          [0, 1],
          [15, 2],
        ]),
      ]),
    ).toHaveLength(2);
  });
  it("legend stats ignore nulls", () => {
    expect(
      lineStats(
        line("a", [
          [1, 0.1],
          [2, null],
          [3, 0.3],
        ]),
      ),
    ).toEqual({ last: 0.3, max: 0.3, mean: expect.closeTo(0.2, 9) });
    expect(lineStats(line("a", [[1, null]]))).toEqual({ last: null, max: null, mean: null });
  });
  it("an all-null or empty answer is 'no data'", () => {
    expect(hasNoData([])).toBe(true);
    expect(hasNoData([line("a", [[1, null]])])).toBe(true);
    expect(hasNoData([line("a", [[1, 0]])])).toBe(false);
  });
  it("the axis includes the 10% line when the series stays at 0.5% (grafana#12135)", () => {
    const rows = toRows([
      line("a", [
        [1, 0.005],
        [2, 0.004],
      ]),
    ]);
    expect(yMax(rows, ["s0"], false, 0.1)).toBeCloseTo(0.115);
    // A series above the threshold sets the top itself.
    expect(yMax(toRows([line("a", [[1, 0.3]])]), ["s0"], false, 0.1)).toBeCloseTo(0.345);
    // Stacked: the sum counts.
    expect(yMax(toRows([line("a", [[1, 2]]), line("b", [[1, 3]])]), ["s0", "s1"], true, 0)).toBeCloseTo(5.75);
    expect(yMax([], [], false, null)).toBe(1);
  });
});

describe("legend names", () => {
  const l = (name: string, labels: Record<string, string>) => ({ name, labels, points: [] });
  it("use the one label that differs between lines", () => {
    expect(
      displayNames([
        l("n / demo.events", { service: "n", topic: "demo.events", result: "success" }),
        l("n / demo.events", { service: "n", topic: "demo.events", result: "error" }),
      ]),
    ).toEqual(["success", "error"]);
  });
  it("keep the API's names otherwise", () => {
    expect(displayNames([l("a", { handler: "x", result: "s" }), l("b", { handler: "y", result: "e" })])).toEqual([
      "a",
      "b",
    ]);
    expect(displayNames([l("only", { result: "s" })])).toEqual(["only"]);
  });
});

describe("Y ticks read as distinct round numbers", () => {
  it("duplicate-ratio ticks are round percents: 0, 5, 10, 15, 20 % for a 17 % top (not 0, 4.5, 9, 14, 17)", () => {
    const { ticks, step } = niceTicks(0.1725, 100);
    expect(ticks.map((t) => formatTick(t, "ratio", step))).toEqual(["0%", "5%", "10%", "15%", "20%"]);
    // The 10 % alert line with 15 % headroom (an axis top of 11.5 %).
    expect(niceTicks(0.115, 100).ticks.map((t) => formatTick(t, "ratio", niceTicks(0.115, 100).step))).toEqual([
      "0%",
      "5%",
      "10%",
      "15%",
    ]);
  });
  it("an error rate of 0.003/s gets ticks that differ (they all read 0/s before)", () => {
    const top = yMax(
      toRows([
        line("e", [
          [1, 0.003],
          [2, 0.0033],
        ]),
      ]),
      ["s0"],
      false,
      0,
    );
    const { ticks, step } = niceTicks(top, 1);
    const labels = ticks.map((t) => formatTick(t, "per_second", step));
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toEqual(["0/s", "0.001/s", "0.002/s", "0.003/s", "0.004/s"]);
    expect(ticks.at(-1)).toBeGreaterThanOrEqual(top);
  });
  it("latency ticks in whole ms steps", () => {
    const { ticks, step } = niceTicks(0.0575, 1000);
    expect(ticks.map((t) => formatTick(t, "seconds", step))).toEqual(["0 ms", "20 ms", "40 ms", "60 ms"]);
  });
  it("a top of 0 still gives an axis", () => {
    expect(niceTicks(0).ticks.length).toBeGreaterThan(1);
  });
});

describe("Duplicates by cause legend", () => {
  it("explains every cause the library counts, and no other", async () => {
    const { DUPLICATE_CAUSES } = await import("@/names/dedup");
    const { DUPLICATE_CAUSE_LEGEND } = await import("./chart-data");
    expect(Object.keys(DUPLICATE_CAUSE_LEGEND).sort()).toEqual([...DUPLICATE_CAUSES].sort());
    expect(DUPLICATE_CAUSE_LEGEND.redelivery!.text).toMatch(/same Kafka position/);
    expect(DUPLICATE_CAUSE_LEGEND.republish!.text).toMatch(/new position/);
  });
});
