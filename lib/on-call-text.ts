/**
 * The on-call lines of a handler, as text: runs without a dedup check, a lost dedup memory, the DLQ
 * backlog, a stale key count. Isomorphic (the notes under the tiles and the tests read them).
 */
import type { OverviewHandler } from "@/lib/api/overview";
import { formatClockSeconds, formatCount, formatNumber, formatPercent } from "@/lib/format";

/** What each reason of an unchecked run means, in a phrase. */
const UNCHECKED_BECAUSE: Record<string, string> = {
  redis_conn: "Redis unreachable",
  redis_timeout: "checks timed out",
  marshal: "records without a usable UUID",
};

/**
 * "312 messages ran without a dedup check in 5 min (fail-open: Redis unreachable)": the work the
 * dedup did not guard, from `deduplication_unchecked_total`; null when none did.
 */
export function uncheckedText(u: OverviewHandler["unchecked"]): string | null {
  if (!u || u.status !== "ok" || u.total < 0.5) return null;
  const why = Object.entries(u.byReason)
    .filter(([, v]) => v >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([r]) => UNCHECKED_BECAUSE[r] ?? r)
    .join(", ");
  return `${formatCount(Math.round(u.total), "messages")} ran without a dedup check in 5 min (fail-open: ${why}); a repeat among them ran again`;
}

/** "stale since 14:02:11 (Redis cannot be read; last count kept)", or null while Redis answers. */
export function staleSinceText(staleSince: string | null | undefined): string | null {
  const t = staleSince ? Date.parse(staleSince) : NaN;
  return Number.isFinite(t)
    ? `stale since ${formatClockSeconds(t / 1000)} (Redis cannot be read; last count kept)`
    : null;
}

const LOSS_CAUSE: Record<NonNullable<OverviewHandler["memoryLost"]>["cause"], string> = {
  restart: "Redis restarted",
  failover: "another Redis server answers (a failover)",
  drop: "without a restart: a FLUSH, eviction or deletion",
};

/**
 * "Dedup memory lost at 14:05:02: 31,000 of 31,004 keys gone (100%) — Redis restarted; duplicates
 * within the window will run again"; null without a held loss.
 */
export function memoryLostText(l: OverviewHandler["memoryLost"]): string | null {
  if (!l) return null;
  return (
    `Dedup memory lost at ${formatClockSeconds(Date.parse(l.at) / 1000)}: ${formatNumber(l.before - l.now)} of ${formatCount(l.before)} gone ` +
    `(${formatPercent(l.share)}) — ${LOSS_CAUSE[l.cause]}; duplicates within the window will run again`
  );
}

/**
 * "35 DLQ records wait for a re-drive (redis_conn 30, handler_error 5; newest 14:03:10)": every
 * record of this handler in the DLQ topic's retention; null when none (or unreadable).
 */
export function dlqBacklogText(b: OverviewHandler["dlqBacklog"]): string | null {
  if (!b || b.status !== "ok" || b.total === 0) return null;
  const reasons = Object.entries(b.byReason)
    .sort((x, y) => y[1] - x[1])
    .map(([r, n]) => `${r} ${formatNumber(n)}`)
    .join(", ");
  const newest = b.newestAt ? `; newest ${formatClockSeconds(Date.parse(b.newestAt) / 1000)}` : "";
  return `${b.complete ? "" : "at least "}${formatCount(b.total, b.total === 1 ? "DLQ record waits" : "DLQ records wait")} for a re-drive (${reasons}${newest})`;
}

/** The DLQ page filtered to this handler (and its one reason, when there is one). */
export function dlqHref(handler: string, b: OverviewHandler["dlqBacklog"]): string {
  const q = new URLSearchParams({ handler });
  const reasons = b && b.status === "ok" ? Object.keys(b.byReason) : [];
  if (reasons.length === 1) q.set("reason", reasons[0]!);
  return `/dlq?${q.toString()}`;
}
