/**
 * The note under a handler's figures while this app is younger than their window: a 5-min figure
 * (and an alert over it) read minutes after a start still holds what the metrics store kept from
 * before — the app's previous process, or another app that answered the same scrape (a demo). A
 * figure from before a restart says so instead of reading as this process's.
 */
import type { OverviewHandler } from "@/lib/api/overview";
import { formatDurationMs } from "@/lib/format";

/**
 * "This app started 40 s ago (at 11:14:42): the 5 min figures and alerts still include 4 min 20 s from
 * before it (…)"; `null` once the window lies wholly after the start, or without a start.
 */
export function beforeStartText(b: OverviewHandler["beforeStart"], now: number = Date.now()): string | null {
  if (!b) return null;
  const started = Date.parse(b.appStartedAt);
  if (!Number.isFinite(started)) return null;
  const before = b.windowSeconds * 1000 - Math.max(0, now - started);
  if (before <= 0) return null;
  const clock = new Date(started).toLocaleTimeString("en-GB", { hour12: false });
  return (
    `This app started ${formatDurationMs(Math.max(1000, now - started))} ago (at ${clock}): the ` +
    `${formatDurationMs(b.windowSeconds * 1000)} figures and alerts still include ${formatDurationMs(before)} ` +
    `from before it (its previous process, or another app on the same scrape).`
  );
}
