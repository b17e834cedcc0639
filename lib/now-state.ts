/**
 * "Now" against the alert's window, for every rate tile: the figure of the last scrape interval
 * (lib/alert-exprs `NOW_WINDOW`) beside the 5-min one the alert reads, and a word when the two
 * disagree about the threshold. Isomorphic.
 */

/**
 * - `recovering`: the fault is over but the window still breaches (the alert may stay or even start
 *   firing until the window has slid past it).
 * - `starting`: now breaches but the window not yet (a fault began; the window and the alert follow).
 */
export type NowState = "recovering" | "starting";

/**
 * The chance of a quiet period under which a fault is called over: quiet for q s at r bad checks/s
 * happens by chance with probability e^(−r·q), so a fault is over once r·q ≥ −ln(0.001) ≈ 6.9.
 */
export const QUIET_CHANCE = 0.001;

/**
 * What says the tile's fault is over at the first scrape after its end (docs/UI.md "Over at one
 * scrape"): `seconds` from the newest bad check (failed, or slower than the threshold) of any replica
 * to the scrape that read it, 0 when no check came after it, null/undefined when no live process
 * had one; `badRate` the window's bad checks per second (the rate the fault ran at, at least).
 */
export interface QuietEvidence {
  seconds: number | null | undefined;
  badRate: number | null | undefined;
  /**
   * The figure is a quantile: its last interval under the threshold is it being fine now, whatever
   * a stray slow check does to the quiet. Not for an error count, where a partial fault leaves
   * intervals without errors.
   */
  nowSuffices?: boolean;
  /**
   * The figures of the same cause now (the p99 tile: dedup errors/s now). Failed checks are not
   * timed, so during a Redis outage the p99 "now" falls while errors run at 15.8/s: a figure whose
   * samples stop during a fault is not recovering while another figure of its cause still breaches.
   */
  othersNow?: number | null;
}

/** Seconds of quiet after which a fault at `badRate` bad checks/s is over (e^(−r·q) < {@link QUIET_CHANCE}); null without a rate. */
export function quietBoundSeconds(badRate: number | null | undefined): number | null {
  return badRate !== null && badRate !== undefined && badRate > 0 ? -Math.log(QUIET_CHANCE) / badRate : null;
}

/**
 * The word for a tile whose threshold is "value > threshold", or null when now and the window agree
 * or a figure is missing. With `quiet` evidence (the error and p99 tiles), a breaching window is
 * "recovering" exactly when the quiet passed the bound at the window's bad-check rate and a check
 * came after the last bad one — at the first scrape that shows it, whatever "now" (a rate over the
 * last interval, which still holds the fault's tail) says; a quantile (`nowSuffices`, the p99)
 * is also "recovering" once now is under it (stray slow checks on a busy host must not
 * hold it). Without evidence (the duplicate ratio, a
 * consumer without the gauges, no bad check in any live process): "recovering" when now is fine.
 */
export function nowState(
  now: number | null | undefined,
  window: number | null | undefined,
  threshold: number,
  quiet?: QuietEvidence,
): NowState | null {
  if (window === null || window === undefined) return null;
  const bound =
    quiet && quiet.seconds !== null && quiet.seconds !== undefined ? quietBoundSeconds(quiet.badRate) : null;
  const over = bound === null ? undefined : quiet!.seconds! > 0 && quiet!.seconds! >= bound;
  const nowFine = now !== null && now !== undefined && !(now > threshold);
  if (window > threshold) {
    if (quiet?.othersNow !== null && quiet?.othersNow !== undefined && quiet.othersNow > 0) return null;
    if (over === true) return "recovering";
    // A quantile or ratio under its threshold over the last interval is the figure itself being fine
    // now, whatever a stray slow check says; an error count (threshold 0) needs the quiet evidence
    // where there is any, since a partial fault leaves intervals without errors.
    if (over === false) return quiet?.nowSuffices && nowFine ? "recovering" : null;
    return nowFine ? "recovering" : null;
  }
  return now !== null && now !== undefined && now > threshold && over !== true ? "starting" : null;
}

/** What each word tells the on-call, for the tile's hint. */
export const NOW_STATE_TEXT: Record<NowState, string> = {
  recovering:
    "recovering: the fault is over (quiet for longer than its rate explains — assuming bad checks come at the window's rate — or fine now, with no figure of the same cause breaching now), the 5-min window (what the alert reads) still holds it",
  starting: "starting: breaching now, the 5-min window (what the alert reads) has not caught up yet",
};
