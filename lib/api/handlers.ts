/** Shapes of `GET /api/handlers`: what the store holds per handler prefix, from the key inspection. Isomorphic. */
import { z } from "zod";
import { answerSchema, handlerPrefixSchema, keyStateCountsSchema, upstreamSchema } from "./common";

/** TTL distribution bucket: keys whose remaining TTL is in `[minMs, maxMs)`; `maxMs: null` = no upper bound. */
export const ttlBucketSchema = z.object({
  label: z.string(),
  minMs: z.number(),
  maxMs: z.number().nullable(),
  count: z.number(),
  /** Of `count`, `processing` leases (in flight or abandoned), scaled from the sampled states like the rest. */
  processing: z.number(),
});
/** One TTL bucket. */
export type TtlBucket = z.infer<typeof ttlBucketSchema>;

/** Progress of the key-count scan: keys visited so far out of the keyspace size (DBSIZE sum). */
export const scanProgressSchema = z.object({
  scanned: z.number(),
  total: z.number(),
  done: z.boolean(),
  /** `exact` (full SCAN) or `estimate` (keys sampled from random SCAN cursors × DBSIZE). */
  mode: z.enum(["exact", "estimate"]),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
/** Progress of the key-count scan. */
export type ScanProgress = z.infer<typeof scanProgressSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/handlers[?refresh=1][&mode=estimate]

/** Observed TTLs (remaining, ms) over a handler's keys; `null` when no key has one. */
export const observedTtlSchema = z.object({ minMs: z.number(), maxMs: z.number(), p50Ms: z.number() }).nullable();

/**
 * How exact a count of a handler's keys is and what it holds: `exact`, else the estimate's `errorBound`
 * (± at 99.9% confidence, 0 when exact); keys without a TTL (they never expire: a bug).
 */
const countedKeysShape = { exact: z.boolean(), errorBound: z.number(), noTtlCount: z.number() };

/**
 * A handler's last completed key count as the pages show it beside their own figures (overview,
 * capacity): {@link countedKeysShape}, the `processing` leases among the keys and their share
 * (0..1, `null` unknown), and when the count finished (`null` when no key was counted).
 */
export const keyCountSchema = z.object({ ...countedKeysShape, processing: z.number(), leaseShare: z.number().nullable(), countedAt: z.string().nullable() });

/** What Redis holds for one handler prefix `<service>:dedup:<handler>`. */
export const handlerKeysSchema = handlerPrefixSchema.extend({
  /** Live keys: exact count, or the estimate when `exact` is false. */
  keyCount: z.number(),
  ...countedKeysShape,
  /** `noTtlCount` is exact (every key checked, or the database has no key without TTL at all); else scaled from a sample. */
  noTtlExact: z.boolean(),
  /** `ttlBuckets`/`ttlObserved` come from a uniform sample of the handler's keys scaled to `keyCount`. */
  ttlSampled: z.boolean(),
  ttlBuckets: z.array(ttlBucketSchema),
  /**
   * Mean bytes per key over a sample of keys: `MEMORY USAGE` plus the key's share of the main and
   * expires dicts (`MEMORY STATS`), which `MEMORY USAGE` leaves out; `null` when no key was sampled.
   */
  bytesPerKey: z.number().nullable(),
  /** `bytesPerKey` is an estimate (embedded mode: heap bytes of key, value and entry), not Redis' `MEMORY USAGE`. */
  bytesEstimated: z.boolean().optional(),
  /** Sampled key states, as counts over `sampleSize` keys. */
  states: keyStateCountsSchema,
  sampleSize: z.number(),
  /**
   * `keyCount` split by state: the sampled shares scaled to the count (exact when the sample was
   * every key). `processing` are leases: real in-flight work, or abandoned claims until they expire.
   */
  byState: keyStateCountsSchema.extend({ exact: z.boolean() }),
  /** `processing` ÷ all keys (0..1); `null` when no key was sampled. */
  leaseShare: z.number().nullable(),
  /** Smallest remaining TTL (ms) among sampled keys that are not leases: the oldest key's age is the window minus it; `null` when none. */
  settledMinTtlMs: z.number().nullable(),
  /** When the count these numbers come from finished (ISO). Every page shows the same completed count with this time. */
  countedAt: z.string(),
  ttlObserved: observedTtlSchema,
  scan: scanProgressSchema,
});
/** What Redis holds for one handler prefix. */
export type HandlerKeys = z.infer<typeof handlerKeysSchema>;

/** Answer of `GET /api/handlers`. */
export const handlersResponseSchema = answerSchema({
  /** Health of the dedup store the keys are counted in (`not-configured` without Redis: see `storeKind`). */
  store: upstreamSchema,
  /** Configured globs the inspector is confined to (`DEDUP_PREFIXES`). */
  prefixes: z.array(z.string()),
  /** Where the keys are: Redis, the embedded mode's in-memory store, or nowhere inspectable. */
  storeKind: z.enum(["redis", "memory", "none"]).optional(),
  scan: scanProgressSchema,
  /** Whether `refresh=1` started a new scan (false when rate-limited or one is running). */
  refresh: z.object({ requested: z.boolean(), started: z.boolean(), retryAfterMs: z.number() }),
  /** Empty (not absent) while the first scan runs or when Redis is down; see `store` and `scan`. */
  handlers: z.array(handlerKeysSchema),
  /** Keys without TTL over all handlers (flag when > 0). */
  noTtlTotal: z.number(),
});
/** Answer of `GET /api/handlers`. */
export type HandlersResponse = z.infer<typeof handlersResponseSchema>;

const flag = z.enum(["0", "1", "true", "false"]).transform((v) => v === "1" || v === "true");
/** `GET /api/handlers?refresh=1&mode=estimate` */
export const handlersQuerySchema = z.object({
  refresh: flag.default(false),
  /** Force a sampled estimate even below `INSPECT_EXACT_MAX_KEYS`. */
  mode: z.enum(["exact", "estimate", "auto"]).default("auto"),
});
