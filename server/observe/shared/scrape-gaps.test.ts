import { describe, expect, it } from "vitest";
import { maskScrapeGaps } from "./scrape-gaps";

const line = (service: string | undefined, points: Array<[number, number | null]>) => ({
  name: "x",
  labels: (service ? { service } : {}) as Record<string, string>,
  points,
});

describe("chart points where the service was not scraped are gaps", () => {
  // Step 15 s; the rate keeps a value all along (5-min window), the scrapes do not.
  const rate = line("s", [
    [0, 1],
    [15, 1],
    [30, 1],
    [45, 1],
    [60, 1],
    [75, 1],
    [90, 1],
  ]);

  it("a failed scrape (stale series: no scrape_time point) nulls those steps", () => {
    const scrapes = [
      {
        labels: { service: "s" },
        points: [
          [0, 0],
          [15, 14],
          [75, 74],
          [90, 89],
        ] as Array<[number, number | null]>,
      },
    ];
    expect(maskScrapeGaps([rate], scrapes, 15)[0]!.points.map((p) => p[1])).toEqual([1, 1, null, null, null, 1, 1]);
  });

  it("Prometheus down (the latest scrape grows old) nulls the steps beyond the tolerance", () => {
    // Last scrape at 14 s until 75 s: at 45 s it is 31 s old (> 30 s).
    const scrapes = [
      {
        labels: { service: "s" },
        points: [
          [0, 0],
          [15, 14],
          [30, 14],
          [45, 14],
          [60, 14],
          [75, 74],
          [90, 89],
        ] as Array<[number, number | null]>,
      },
    ];
    expect(maskScrapeGaps([rate], scrapes, 15)[0]!.points.map((p) => p[1])).toEqual([1, 1, 1, null, null, 1, 1]);
  });

  it("leaves a line alone when its service has no scrape_time series or it has no service", () => {
    const scrapes = [{ labels: { service: "other" }, points: [[0, 0]] as Array<[number, number | null]> }];
    expect(maskScrapeGaps([rate], scrapes, 15)[0]).toEqual(rate);
    const lag = line(undefined, [[0, 5]]);
    expect(maskScrapeGaps([lag], scrapes, 15)[0]).toEqual(lag);
  });
});
