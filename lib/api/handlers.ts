/** Shapes of `GET /api/handlers`: what the store holds per handler prefix, from the key inspection. Isomorphic. */
import { z } from "zod";
import {
  answerSchema,
  findingSchema,
  handlerPrefixSchema,
  LABEL_VALUE_RE,
  keyStateCountsSchema,
  upstreamSchema,
} from "./common";
import { consumerGroupViewSchema } from "./consumers";
import { INFO_MARKINGS, type InfoMarking } from "@/names/contract";

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
export const keyCountSchema = z.object({
  ...countedKeysShape,
  processing: z.number(),
  leaseShare: z.number().nullable(),
  countedAt: z.string().nullable(),
});

/** The stores a handler's keys are counted in: Redis, the embedded in-memory store, or the PostgreSQL inbox's table. */
export const keyStoreSchema = z.enum(["redis", "memory", "postgres-inbox"]);
/** A store of dedup keys. */
export type KeyStore = z.infer<typeof keyStoreSchema>;

/** What the store holds for one handler prefix `<service>:dedup:<handler>`. */
export const handlerKeysSchema = handlerPrefixSchema.extend({
  /** Where these keys are; absent: the answer's `storeKind`. */
  store: keyStoreSchema.optional(),
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
  /** Where the keys are: Redis, the embedded mode's in-memory store, or nowhere inspectable (the inbox's rows: `inbox`). */
  storeKind: z.enum([...keyStoreSchema.options, "none"]).optional(),
  scan: scanProgressSchema,
  /** Whether `refresh=1` started a new scan (false when rate-limited or one is running). */
  refresh: z.object({ requested: z.boolean(), started: z.boolean(), retryAfterMs: z.number() }),
  /** Empty (not absent) while the first scan runs or when Redis is down; see `store` and `scan`. */
  handlers: z.array(handlerKeysSchema),
  /** Keys without TTL over all handlers (flag when > 0). */
  noTtlTotal: z.number(),
  /**
   * The PostgreSQL inbox table read beside the key store (`INBOX_TABLE`): its health, and the
   * handlers whose rows were not counted (declared `postgres-inbox`, the table not read) with why —
   * never a 0. Absent when no inbox table is configured. Its counted handlers are in `handlers`
   * with `store: "postgres-inbox"`.
   */
  inbox: z
    .object({
      store: upstreamSchema,
      table: z.string(),
      notMeasured: z.array(handlerPrefixSchema.extend({ reason: z.string() })),
    })
    .optional(),
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

// ---------------------------------------------------------------------------------------------
// GET /api/handlers/{service}/{handler}

/** A field the handler does not declare: which signal would say it, and what the page says instead. Never a zero. */
export const notDeclaredSchema = z.object({
  status: z.literal("unknown"),
  /** The signal (metric, label) that would say it, e.g. `dedup_handler_info`. */
  needs: z.string(),
  /** What the page shows, e.g. "declares no TTL: export dedup_handler_info". */
  detail: z.string(),
});

/** A field the handler's mode has no value for (a Kafka-transactions handler's window): said so, never a zero nor "unknown". */
export const notApplicableSchema = z.object({
  status: z.literal("n/a"),
  /** What the page shows: "does not apply (transactions mode)". */
  detail: z.string(),
});

const declaredOr = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion("status", [z.object({ status: z.literal("ok"), ...shape }), notDeclaredSchema]);
const declaredOrNotApplicable = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion("status", [
    z.object({ status: z.literal("ok"), ...shape }),
    notDeclaredSchema,
    notApplicableSchema,
  ]);

/** One handler as it declares itself (docs/CONTRACT.md §5), with what is inferred said so and what is unknown said why. */
export const handlerSelfResponseSchema = answerSchema({
  service: z.string(),
  handler: z.string(),
  /** `info`: its `dedup_handler_info` read from Prometheus; `registry`: registered in the dashboard's own process. */
  declaration: declaredOr({
    source: z.enum(["info", "registry"]),
    runtime: z.string().nullable(),
    contract: z.string().nullable(),
  }),
  /** Whether Prometheus' `dedup_handler_info` could be read for the fleet (the last known declarations are used meanwhile). */
  infoRead: upstreamSchema,
  /** Window and class; `inferred` ones say from what (`text`: "default, inferred: keys live 24 h"). */
  ttl: declaredOrNotApplicable({
    ms: z.number(),
    msSource: z.enum(["declared", "observed"]),
    ttlClass: z.enum(["default", "critical", "analytics"]),
    classSource: z.enum(["declared", "inferred"]),
    text: z.string(),
  }),
  /** The lease of a `processing` claim; `ms: null` = it declares none (markings `release`, `before`, `inbox`) or it does not apply (`kafka-transaction`, said in `text`). */
  lease: declaredOr({ ms: z.number().nullable(), text: z.string() }),
  /** The time limit of one attempt; `ms: null` = none declared. */
  timeout: declaredOr({ ms: z.number().nullable() }),
  marking: declaredOr({ value: z.enum(INFO_MARKINGS as [InfoMarking, ...InfoMarking[]]) }),
  failureMode: declaredOr({ value: z.enum(["open", "closed"]) }),
  stack: declaredOr({ names: z.array(z.string()) }),
  /** The topic it consumes: declared, else from its metrics' `topic` label. */
  topic: declaredOr({ value: z.string(), source: z.enum(["declared", "metrics"]) }),
  /** Its key prefix: declared, else `<service>:dedup:<handler>`. */
  prefix: z.object({ value: z.string(), source: z.enum(["declared", "convention"]) }),
  /** Its consumer group: declared, else `<service>.<handler>` (a convention, said so). */
  group: z.object({ id: z.string(), source: z.enum(["declared", "convention"]) }),
  /** How much of the window keys have been written for (the capacity projection's warm-up). */
  window: declaredOrNotApplicable({
    ageMs: z.number(),
    filled: z.number(),
    validAt: z.string().nullable(),
    source: z.enum(["oldest-key", "process-start"]),
  }),
  /** The lint of what it declares, and what it does not declare (the rules needing it did not run). */
  lint: declaredOr({
    source: z.enum(["info", "registry"]),
    findings: z.array(findingSchema),
    unknown: z.array(z.string()),
  }),
  /** Its consumer group on its topic, read from Kafka: members, partitions, lag. */
  consumerGroup: z.discriminatedUnion("status", [
    z.object({ status: z.literal("ok"), topic: z.string(), view: consumerGroupViewSchema }),
    notDeclaredSchema,
    z.object({ status: z.literal("unavailable"), detail: z.string() }),
  ]),
});
/** Answer of `GET /api/handlers/{service}/{handler}`. */
export type HandlerSelfResponse = z.infer<typeof handlerSelfResponseSchema>;

/** A service or handler name as a path segment (a label value). */
const segment = z.string().regex(LABEL_VALUE_RE, "expected a service or handler name (a metric label value)");
/** Path parameters of `GET /api/handlers/{service}/{handler}`. */
export const handlerSelfParamsSchema = z.object({ service: segment, handler: segment });
