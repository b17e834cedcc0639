import { NOW_STATE_TEXT, nowState, type QuietEvidence } from "@/lib/now-state";

/**
 * A rate tile's "now" line: the alert value over the last scrape interval beside the tile's 5-min
 * figure, and "recovering" / "starting" when the two disagree about the threshold.
 */
export function NowFigure({
  now,
  window,
  threshold,
  quiet,
  format,
  testId,
}: {
  now: number | null | undefined;
  window: number | null;
  threshold: number;
  quiet?: QuietEvidence;
  format: (v: number) => string;
  testId: string;
}) {
  if (now === undefined) return null;
  const state = nowState(now, window, threshold, quiet);
  return (
    <span className="block text-sm font-normal text-slate-600 dark:text-slate-300" data-testid={testId}>
      now {now === null ? "—" : format(now)}
      {state ? (
        <strong
          data-testid={`${testId}-state`}
          data-state={state}
          title={NOW_STATE_TEXT[state]}
          className={`ml-1 rounded px-1 ${state === "recovering" ? "bg-emerald-100 text-emerald-800 dark:bg-emerald-900/40 dark:text-emerald-300" : "bg-amber-100 text-amber-800 dark:bg-amber-900/40 dark:text-amber-300"}`}
        >
          {state}
        </strong>
      ) : null}
    </span>
  );
}

/** The tone of a tile whose window breaches: amber while "recovering" (fine now), red otherwise. */
export function windowTone(
  now: number | null | undefined,
  window: number | null,
  threshold: number,
  quiet?: QuietEvidence,
): "bad" | "warn" | null {
  if (window === null || !(window > threshold)) return null;
  return nowState(now, window, threshold, quiet) === "recovering" ? "warn" : "bad";
}
