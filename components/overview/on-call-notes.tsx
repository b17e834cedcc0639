import type { OverviewHandler } from "@/lib/api/overview";
import { formatCount } from "@/lib/format";

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

/** The lines under a handler's tiles that need the on-call's attention; nothing when all is well. */
export function OnCallNotes({ h }: { h: OverviewHandler }) {
  const unchecked = uncheckedText(h.unchecked);
  if (!unchecked) return null;
  return (
    <ul className="space-y-1 text-sm" aria-label="Needs attention">
      {unchecked ? (
        <li data-testid="note-unchecked" className="text-amber-700 dark:text-amber-400">
          {unchecked}
        </li>
      ) : null}
    </ul>
  );
}
