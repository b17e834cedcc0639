import Link from "next/link";
import type { OverviewHandler } from "@/lib/api/overview";
import { dlqBacklogText, dlqHref, memoryLostText, uncheckedText } from "@/lib/on-call-text";

/** The lines under a handler's tiles that need the on-call's attention; nothing when all is well. */
export function OnCallNotes({ h }: { h: OverviewHandler }) {
  const unchecked = uncheckedText(h.unchecked);
  const lost = memoryLostText(h.memoryLost);
  const dlq = dlqBacklogText(h.dlqBacklog);
  if (!unchecked && !lost && !dlq) return null;
  return (
    <ul className="space-y-1 text-sm" aria-label="Needs attention">
      {lost ? (
        <li
          data-testid="note-memory-lost"
          className="font-medium text-red-700 dark:text-red-400"
          suppressHydrationWarning
        >
          {lost}
        </li>
      ) : null}
      {dlq ? (
        <li data-testid="note-dlq-backlog" suppressHydrationWarning>
          {dlq} ·{" "}
          <Link className="underline" href={dlqHref(h.handler, h.dlqBacklog)}>
            open the DLQ
          </Link>
        </li>
      ) : null}
      {unchecked ? (
        <li data-testid="note-unchecked" className="text-amber-700 dark:text-amber-400">
          {unchecked}
        </li>
      ) : null}
    </ul>
  );
}
