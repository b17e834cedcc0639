import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { SeriesLine } from "@/lib/api/series";
import { StaticTimeSeriesChart } from "./static-chart";

const line = (
  name: string,
  points: Array<[number, number | null]>,
  labels: Record<string, string> = {},
): SeriesLine => ({ name, labels, points });
/** The `x,y` pairs of every drawn series element, in document order. */
function drawn(html: string): Array<{ tag: string; pts: Array<[number, number]> }> {
  const out: Array<{ tag: string; pts: Array<[number, number]> }> = [];
  for (const m of html.matchAll(/<(polyline|path)([^>]*data-static-line[^>]*)>/g)) {
    const attr =
      m[1] === "polyline"
        ? /points="([^"]*)"/.exec(m[2]!)![1]!
        : /d="([^"]*)"/.exec(m[2]!)![1]!.replace(/M/g, " ").replace(/h0/g, "");
    out.push({
      tag: m[1]!,
      pts: attr
        .trim()
        .split(/\s+/)
        .map((p) => p.split(",").map(Number) as [number, number]),
    });
  }
  return out;
}

describe("StaticTimeSeriesChart: the server's drawing carries the data (recharts 3 renders nothing there)", () => {
  it("draws each series from its points, scaled to the axis that includes the threshold; a null is a gap", () => {
    const html = renderToStaticMarkup(
      <StaticTimeSeriesChart
        testId="chart-duplicate-ratio"
        label="Duplicate ratio"
        unit="ratio"
        alert={{ value: 0.05, label: "alert 5%" }}
        lines={[
          line("a", [
            [100, 0.01],
            [110, 0.02],
            [120, null],
            [130, 0.01],
            [140, 0.02],
            [150, 0.03],
            [160, 0.01],
          ]),
        ]}
      />,
    );
    expect(html).toContain('data-testid="chart-duplicate-ratio"');
    const d = drawn(html);
    // Two runs: before and after the null.
    expect(d.map((s) => s.pts.length)).toEqual([2, 4]);
    // x: first point at 0, last at 1000 (viewBox); y: 0.01 of an axis topped at 6 % (5 % × 1.15 → ticks 0..6 %).
    expect(d[0]!.pts[0]).toEqual([0, 1000 - (0.01 / 0.06) * 1000].map((v) => +v.toFixed(1)));
    expect(d[1]!.pts[3]![0]).toBe(1000);
    // The threshold at 5 % of 6 %; its label and the Y ticks are text.
    const threshold = /<line[^>]*y1="([\d.]+)"[^>]*class="threshold-alert"/.exec(html);
    expect(Number(threshold?.[1])).toBeCloseTo(1000 - (0.05 / 0.06) * 1000, 3);
    expect(html).toContain("alert 5%");
    for (const tick of ["0%", "2%", "4%", "6%"]) expect(html).toContain(`>${tick}<`);
  });

  it("a series of ≤ 3 points is drawn as dots; the legend has last / max / mean per series", () => {
    const html = renderToStaticMarkup(
      <StaticTimeSeriesChart
        label="Latency"
        unit="seconds"
        lines={[
          line(
            "p99",
            [
              [1, 0.002],
              [2, 0.004],
            ],
            { quantile: "0.99" },
          ),
          line(
            "p50",
            [
              [1, 0.001],
              [2, 0.001],
              [3, 0.001],
              [4, 0.001],
            ],
            { quantile: "0.5" },
          ),
        ]}
      />,
    );
    const d = drawn(html);
    expect(d.map((s) => s.tag)).toEqual(["path", "polyline"]);
    expect(d[0]!.pts).toHaveLength(2);
    expect(html.match(/data-testid="legend-row"/g)).toHaveLength(2);
    expect(html).toContain(">0.99<");
    expect(html).toContain(">4 ms<");
  });

  it("stacks areas: the top line of the last series is the sum", () => {
    const html = renderToStaticMarkup(
      <StaticTimeSeriesChart
        label="Errors"
        unit="per_second"
        stacked
        lines={[
          line(
            "a",
            [
              [1, 1],
              [2, 1],
            ],
            { reason: "a" },
          ),
          line(
            "b",
            [
              [1, 2],
              [2, 3],
            ],
            { reason: "b" },
          ),
        ]}
      />,
    );
    const d = drawn(html);
    expect(d).toHaveLength(2);
    // Sum 4 at t=2 on an axis whose top is ≥ 4 × 1.15: the top line sits above the first one.
    expect(d[1]!.pts[1]![1]).toBeLessThan(d[0]!.pts[1]![1]);
    expect(html.match(/<polygon/g)).toHaveLength(2);
  });
});
