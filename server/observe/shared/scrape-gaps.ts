/**
 * Gaps as gaps: a rate over 5 min keeps a value for minutes after the last sample, so a chart would
 * draw a line across a hole in the data. Each series answer is checked against when its service
 * was last scraped (named query `scrape_time`: the newest sample time of the service's core series,
 * the design note's four metrics, which go stale at the first failed scrape) and its points there
 * become null — for any consumer that keeps the contract, not only those exporting our replica info.
 */
import type { SeriesLine } from "@/lib/api/series";
import type { RangeSeries } from "../metrics/source";

/** How old a service's latest scrape may be at a point (seconds) before the point is a gap: two steps, at least 30 s. */
export function gapToleranceSec(stepSec: number): number {
  return Math.max(2 * stepSec, 30);
}

/**
 * Nulls the points of `lines` where their service was not being scraped: no `scrape_time` value at
 * that step (the series went stale: the scrape failed, the app was down) or a latest scrape older
 * than {@link gapToleranceSec} (Prometheus itself scraped nothing). A line without a `service`
 * label, or of a service that has no `scrape_time` series at all in the range, is left as it is.
 */
export function maskScrapeGaps(
  lines: readonly SeriesLine[],
  scrapes: readonly RangeSeries[],
  stepSec: number,
): SeriesLine[] {
  const byService = new Map<string, Map<number, number>>();
  for (const s of scrapes) {
    const svc = s.labels.service;
    if (!svc) continue;
    const m = byService.get(svc) ?? new Map<number, number>();
    for (const [t, v] of s.points) if (v !== null) m.set(t, Math.max(m.get(t) ?? -Infinity, v));
    byService.set(svc, m);
  }
  const tol = gapToleranceSec(stepSec);
  return lines.map((l) => {
    const seen = l.labels.service === undefined ? undefined : byService.get(l.labels.service);
    if (!seen || seen.size === 0) return l;
    return {
      ...l,
      points: l.points.map(([t, v]): [number, number | null] => {
        const last = seen.get(t);
        return [t, last === undefined || t - last > tol ? null : v];
      }),
    };
  });
}
