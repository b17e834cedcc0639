import type { RangeKey } from "@/lib/api/common";
// Not from lib/url-state: it imports next/navigation's client hook, which fails `next build` in a route.
import { RANGE_SECONDS } from "@/lib/ranges";

/** Most points per line: a step below range/MAX_POINTS is raised to it (Prometheus caps at 11,000). */
export const MAX_POINTS = 1000;

/**
 * The steps `/api/series` computes, in seconds. A requested step is raised to the next one of these
 * (and to range/{@link MAX_POINTS}), so arbitrary `step=` values share a few cache entries instead of
 * each costing a Prometheus query.
 */
export const SERIES_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21_600, 86_400] as const;

/** The allowed step for `requested` seconds over `range`; `undefined` (the range's default) stays so. */
export function normalizeStep(range: RangeKey, requested: number | undefined): number | undefined {
  if (requested === undefined) return undefined;
  const floor = Math.max(requested, Math.ceil(RANGE_SECONDS[range] / MAX_POINTS));
  return SERIES_STEPS.find((s) => s >= floor) ?? SERIES_STEPS[SERIES_STEPS.length - 1];
}
