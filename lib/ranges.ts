/**
 * The dashboard's time ranges — keys, labels, lengths in seconds — written once for the client
 * (lib/url-state.ts, the toolbar) and the server (server/observe/routes/series.ts): a plain module
 * without React or zod, so both bundles can import it.
 */
import type { RangeKey } from "@/lib/api/common";

/** Time ranges, as `lib/api/common.ts` RANGES (repeated here so the browser bundle does not pull zod). */
export const RANGE_OPTIONS = ["5m", "15m", "1h", "6h", "24h", "7d"] as const satisfies readonly RangeKey[];
/** Human labels of the ranges. */
export const RANGE_LABELS: Record<RangeKey, string> = {
  "5m": "Last 5 minutes",
  "15m": "Last 15 minutes",
  "1h": "Last 1 hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
};
/** Range in seconds. */
export const RANGE_SECONDS: Record<RangeKey, number> = {
  "5m": 300,
  "15m": 900,
  "1h": 3600,
  "6h": 21_600,
  "24h": 86_400,
  "7d": 604_800,
};
