/**
 * The TTL policy of spec §3, as plain numbers (milliseconds). Pure data with no imports, so the
 * library's lint and the isomorphic thresholds module (`lib/thresholds.ts`) share one source.
 */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** TTL windows per class of message (spec §3) and the lint's limits. */
export const TTL_POLICY = {
  /** Ordinary domain events. */
  defaultMs: DAY_MS,
  /** Critical events (user.banned, consent-revoke): a repeat must not pass even after a week. */
  criticalMs: 7 * DAY_MS,
  /** High-volume analytics: at most this. */
  analyticsMaxMs: HOUR_MS,
  /** Below this is an error for every class: the retry window plus a rebalance outlives the key. */
  minimumMs: 10 * MINUTE_MS,
  /** Below this is a warning unless the handler is declared analytics. */
  warnBelowMs: HOUR_MS,
} as const;

/** The class a handler declares for its messages. */
export type TtlClass = "default" | "critical" | "analytics";
