/**
 * What the dedup store holds and for how long, written once: the key prefix
 * `<service>:dedup:<handler>` (spec §2), the owner in a claim token, and the TTL policy of spec §3
 * with its time units.
 * **Imports nothing**, so the library, the dashboard and the browser read the same names.
 */

/** The segment between service and handler in a key prefix. */
export const DEDUP_KEY_SEGMENT = "dedup";

/** The key prefix of a handler: `<service>:dedup:<handler>` (spec §2); a key is `<prefix>:<key>`. */
export function dedupKeyPrefix(service: string, handler: string): string {
  return `${service}:${DEDUP_KEY_SEGMENT}:${handler}`;
}

/** The Redis glob of every handler's keys of every service: `*:dedup:*` (the default `DEDUP_PREFIXES`). */
export const ALL_DEDUP_KEYS_GLOB = dedupKeyPrefix("*", "*");

/**
 * Ends the owner of a claim token: `processing:<owner>/<tag><seq>` (`claimed:` alike), the owner
 * being the process's replica id `<hostname>-<pid>`, so a key browser can tell a dead owner's lease
 * from a live one's. Neither a hostname nor base64url holds it; tokens written before (no `/`) have
 * no owner.
 */
export const CLAIM_OWNER_SEPARATOR = "/";

/** The owner (`<hostname>-<pid>`) of a claim token or of a whole `processing:` / `claimed:` value; null when it names none. */
export function claimOwnerOf(tokenOrValue: string): string | null {
  const colon = tokenOrValue.indexOf(":");
  const token =
    tokenOrValue.startsWith("processing:") || tokenOrValue.startsWith("claimed:")
      ? tokenOrValue.slice(colon + 1)
      : tokenOrValue;
  const at = token.lastIndexOf(CLAIM_OWNER_SEPARATOR);
  return at > 0 ? token.slice(0, at) : null;
}

// TTL policy (spec §3), in milliseconds.

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

/** The classes a handler may declare for its messages (spec §3). */
export const TTL_CLASSES = ["default", "critical", "analytics"] as const;
/** The class a handler declares for its messages. */
export type TtlClass = (typeof TTL_CLASSES)[number];
