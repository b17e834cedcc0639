/** The notes under a handler's tiles: an old scrape, figures from before this app started, signals not exported. */
import type { OverviewHandler } from "@/lib/api/overview";
import { beforeStartText } from "@/lib/restart-note";
import { useNow } from "../use-now";

/** What each optional signal of the row is, for "not measured for this service: …". */
const SIGNAL_WHAT: Record<keyof NonNullable<OverviewHandler["signals"]>, string> = {
  byCause: "duplicates by cause",
  payloadConflicts: "payload conflicts",
  leases: "lease counters",
  hotUuids: "hot UUIDs",
};

/**
 * "Not measured for this service: duplicates by cause (export messages_duplicates_by_cause_total),
 * …": the row's figures whose signal its service does not export, so none of them reads as zero.
 */
export function notMeasuredLine(h: OverviewHandler): string | null {
  const parts = Object.entries(h.signals ?? {}).flatMap(([k, m]) =>
    m.status === "unknown" ? [`${SIGNAL_WHAT[k as keyof typeof SIGNAL_WHAT]} (export ${m.metric})`] : [],
  );
  if (h.unchecked?.status === "unknown") parts.push(`runs without a dedup check (export ${h.unchecked.metric})`);
  return parts.length ? `Not measured for this service: ${parts.join(", ")}.` : null;
}

/**
 * Under the tiles: that the service's scrape is down (every figure is old), that the window still
 * holds figures from before this app started, and which signals it does not export.
 */
export function ScrapeAndSignalNotes({ h }: { h: OverviewHandler }) {
  // Whether the window still reaches before the start moves with the clock: drawn after hydration only.
  const now = useNow(5_000);
  const beforeStart = now === null ? null : beforeStartText(h.beforeStart, now);
  return (
    <>
      {h.scrape?.status === "down" ? (
        <p className="text-sm font-medium text-amber-700 dark:text-amber-300" data-testid="no-scrape">
          {h.scrape.detail}: every figure above is from before it; Prometheus no longer scrapes {h.service} (up == 0, or
          its target is gone).
        </p>
      ) : null}
      {beforeStart ? (
        <p className="text-sm text-amber-700 dark:text-amber-300" data-testid="before-start">
          {beforeStart}
        </p>
      ) : null}
      {notMeasuredLine(h) ? (
        <p className="text-xs text-slate-600 dark:text-slate-300" data-testid="not-measured-signals">
          {notMeasuredLine(h)}
        </p>
      ) : null}
    </>
  );
}
