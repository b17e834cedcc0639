/**
 * Texts of the workshop's run view that must agree with each other (isomorphic, no zod): the
 * summary counts deliveries, the timeline lists attempt verdicts — each says which it counts.
 */
import { formatNumber } from "./format";
import type { RunView } from "@/lib/api/workshop";

/**
 * The timeline's heading. Its entries are attempt verdicts (a delivery Retry ran three times has
 * three, a DLQ publish adds one), so it names them and gives the summary's delivery count beside
 * them: "48 attempt verdicts for 30 deliveries".
 */
export function timelineHeading(run: Pick<RunView, "summary" | "timeline" | "timelineTotal">): string {
  const shown = run.timelineTotal > run.timeline.length ? ` (first ${formatNumber(run.timeline.length)} shown)` : "";
  const d = run.summary.deliveries;
  const n = run.timelineTotal;
  return `${formatNumber(n)} attempt verdict${n === 1 ? "" : "s"} for ${formatNumber(d)} deliver${d === 1 ? "y" : "ies"}${shown}`;
}
