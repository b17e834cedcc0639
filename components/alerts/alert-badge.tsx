import type { AlertStateName } from "@/lib/api-types";
import { formatSince } from "@/lib/format";

const TONE: Record<AlertStateName, string> = {
  inactive: "bg-emerald-100 text-emerald-900 ring-emerald-300 dark:bg-emerald-900/40 dark:text-emerald-200 dark:ring-emerald-800",
  pending: "bg-amber-100 text-amber-900 ring-amber-300 dark:bg-amber-900/40 dark:text-amber-200 dark:ring-amber-800",
  firing: "bg-red-100 text-red-900 ring-red-300 dark:bg-red-900/50 dark:text-red-100 dark:ring-red-800",
};

/** Alert state as Prometheus names it, with "since" when pending or firing. Colour is never the only cue: the word is shown. */
export function AlertBadge({ state, since, now }: { state: AlertStateName; since?: string | null; now?: number }) {
  return (
    <span data-testid="alert-state" data-state={state} className={`inline-flex items-center gap-1 rounded px-2 py-0.5 text-xs font-medium ring-1 ${TONE[state]}`}>
      <span aria-hidden>{state === "firing" ? "●" : state === "pending" ? "◐" : "○"}</span>
      {state}
      {state !== "inactive" && since ? <span className="font-normal opacity-80">since {formatSince(since, now)}</span> : null}
    </span>
  );
}
