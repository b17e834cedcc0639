/**
 * "Now" against the alert's window, for every rate tile: the figure of the last scrape interval
 * (lib/alert-exprs `NOW_WINDOW`) beside the 5-min one the alert reads, and a word when the two
 * disagree about the threshold. Isomorphic.
 */

/**
 * - `recovering`: now is within the threshold but the window still breaches (the fault ended; the
 *   alert may stay or even start firing until the window has slid past it).
 * - `starting`: now breaches but the window not yet (a fault began; the window and the alert follow).
 */
export type NowState = "recovering" | "starting";

/**
 * The word for a tile whose threshold is "value > threshold", or null when now and the window
 * agree or either has no value (no traffic, no samples lately).
 */
export function nowState(now: number | null | undefined, window: number | null | undefined, threshold: number): NowState | null {
  if (now === null || now === undefined || window === null || window === undefined) return null;
  const nowBad = now > threshold;
  const windowBad = window > threshold;
  if (windowBad && !nowBad) return "recovering";
  if (nowBad && !windowBad) return "starting";
  return null;
}

/** What each word tells the on-call, for the tile's hint. */
export const NOW_STATE_TEXT: Record<NowState, string> = {
  recovering: "recovering: fine now, the 5-min window (what the alert reads) still holds the fault",
  starting: "starting: breaching now, the 5-min window (what the alert reads) has not caught up yet",
};
