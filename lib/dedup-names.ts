/**
 * The one bridge from `lib/` into the library: re-exports the names `server/dedup/names.ts` writes
 * (metric names, label values, the key prefix, the TTL policy). That module imports nothing — pure
 * constants and tiny pure functions — so the UI bundle, the rule generator and the backend read the
 * SAME names without pulling in Node or prom-client. No other file of `lib/` or `components/` may
 * import `server/` (server/architecture.test.ts enforces it); import the names from here.
 */
export {
  METRIC_NAMES as LIBRARY_METRIC_NAMES,
  PROCESSED_RESULT,
  PROCESSED_RESULTS,
  DEDUP_ERROR_REASON,
  DEDUP_ERROR_REASONS,
  POISON_REASON_CLASS,
  POISON_REASON_CLASSES,
  DUPLICATE_CAUSE,
  DUPLICATE_CAUSES,
  ALL_DEDUP_KEYS_GLOB,
  dedupKeyPrefix,
  DAY_MS,
  HOUR_MS,
  MINUTE_MS,
  TTL_POLICY,
  type ProcessedResult,
  type DedupErrorReason,
  type PoisonReasonClass,
  type DuplicateCause,
  type TtlClass,
} from "@/server/dedup/names";
