/**
 * The TTL policy of spec §3 — written in `./names`; this module only re-exports it for
 * `lib/thresholds.ts` until that imports the names through its bridge. New code: import `./names`.
 */
export { DAY_MS, HOUR_MS, MINUTE_MS, TTL_POLICY, type TtlClass } from "./names";
