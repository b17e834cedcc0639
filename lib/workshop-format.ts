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

/** What a run's tiles are read from: its state, summary and own topics. */
type TileRun = Pick<RunView, "status" | "summary" | "topics">;

/**
 * A tile's note where its figure needs a word of why, or null: the DLQ copies live in the run's own
 * DLQ topic (the DLQ page lists the demo's, so it says 0), and a Deduplicated count above the
 * published events counts each swallowed copy — an event re-read at every rebalance counts each time.
 */
export function tileNote(field: keyof RunView["summary"], run: TileRun): string | null {
  const s = run.summary;
  if (field === "dlq")
    return `In this run's own DLQ topic ${run.topics.dlq} (the poisoned rows of the timeline), not in the demo's DLQ the DLQ page lists; deleted when the run ends.`;
  if (field === "deduplicated" && s.deduplicated > s.published)
    return `More than the ${formatNumber(s.published)} events: every swallowed copy counts, and ${formatNumber(s.deliveries)} deliveries brought ${formatNumber(s.deliveries - s.published)} copies (an event re-read at each rebalance or re-sent is swallowed each time).`;
  return null;
}

/**
 * A tile's label while the run is running: its counts are so far, and "Lost" cannot be told from
 * "not handled yet" until the run has settled (restart-before-commit read "Lost 60" at 2 s).
 */
export function tileLabel(label: string, field: keyof RunView["summary"], run: Pick<RunView, "status">): string {
  if (run.status !== "running") return label;
  return field === "lost" ? "Not handled yet" : `${label} so far`;
}
