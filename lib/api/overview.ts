/** Shapes of `GET /api/overview?range=`: per-handler rows, upstream health, alerts, scrape coverage. Isomorphic. */
import { z } from "zod";
import { alertInstanceSchema, alertsFieldSchema, alertsUnknownSchema } from "./alerts";
import {
  answerSchema,
  appModeSchema,
  availableSchema,
  handlerRefSchema,
  metricsSourceSchema,
  rangeSchema,
  ttlClassSchema,
  unavailableSchema,
  upstreamSchema,
} from "./common";
import { keyCountSchema } from "./handlers";
import { measuredFieldSchema, scrapeStateSchema, unknownSchema } from "./measured";
import { TTL_POLICY } from "@/names/keys";

/** Thresholds the charts draw, copied from `lib/thresholds.ts` so a response is self-describing. */
export const thresholdsViewSchema = z.object({
  duplicateRatio: z.number(),
  duplicateRatioNormal: z.number(),
  duplicateRatioFor: z.string(),
  errorRate: z.number(),
  errorRateFor: z.string(),
  checkP99Seconds: z.number(),
  checkP99For: z.string(),
  /** `TTL_POLICY` (names/dedup.ts), field by field. */
  ttlPolicy: z.object(
    Object.fromEntries(Object.keys(TTL_POLICY).map((k) => [k, z.number()])) as Record<
      keyof typeof TTL_POLICY,
      z.ZodNumber
    >,
  ),
});
/** Thresholds the charts draw. */
export type ThresholdsView = z.infer<typeof thresholdsViewSchema>;

// ---------------------------------------------------------------------------------------------
// GET /api/overview?range=

/** Per-handler row of the overview. */
export const overviewHandlerSchema = handlerRefSchema.extend({
  /** Topics seen in the handler's metrics (may be empty). */
  topics: z.array(z.string()),
  /** TTL class declared by the app's handlers (demo), `null` for a handler only seen in Redis/metrics. */
  ttlClass: ttlClassSchema.nullable(),
  /** Current duplicate ratio over 5 min; `value: null` when the handler had no traffic. */
  duplicateRatio: availableSchema({ value: z.number().nullable() }),
  /** Processed messages/s over 5 min, total and by result. */
  processedRate: availableSchema({
    total: z.number(),
    byResult: z.object({ success: z.number(), error: z.number(), deduplicated: z.number() }),
  }),
  /** Check latency of the handler's service (the histogram is per service), timed in the consumer. */
  checkLatency: availableSchema({ p50Seconds: z.number().nullable(), p99Seconds: z.number().nullable() }),
  /**
   * What the check p99 is made of (lib/latency-split): the consumer runtime's own stall (the
   * service's runtime signal, names/runtime; "unknown" with the metrics that would tell it when the
   * service exports none) and Redis' own time per call of the dedup's commands (µs, the slowest of
   * set/eval/evalsha/del over ~15 s; `null` without Redis); the verdict only names a part that
   * explains the p99, and `text` is the tile's sentence.
   */
  latencyParts: z
    .object({
      runtime: z.discriminatedUnion("status", [
        z.object({
          status: z.literal("ok"),
          runtime: z.string(),
          metric: z.string(),
          meaning: z.string(),
          seconds: z.number().nullable(),
        }),
        z.object({ status: z.literal("unknown"), metrics: z.array(z.string()), detail: z.string() }),
      ]),
      redisUsecPerCall: z.number().nullable(),
      verdict: z.enum(["consumer", "redis", "not_redis", "unexplained"]).nullable(),
      text: z.string(),
    })
    .optional(),
  /** Whether the service is scraped now; `down` turns every figure of the row into "no scrape since …". */
  scrape: scrapeStateSchema.optional(),
  /**
   * The optional signals of this row's figures (lib/signals), from what Prometheus holds for the
   * service: "unknown" with the metric to export where it has none (never a zero).
   */
  signals: z
    .object({
      byCause: measuredFieldSchema,
      payloadConflicts: measuredFieldSchema,
      leases: measuredFieldSchema,
      hotUuids: measuredFieldSchema,
    })
    .optional(),
  /**
   * The same three alert values "now" — over the last scrape interval (lib/alert-exprs
   * `NOW_WINDOW`) instead of 5 min — for the tiles' "now" figure and their recovering/starting
   * word; `null` where the last interval has no value (no traffic, no samples lately).
   */
  now: availableSchema({
    duplicateRatio: z.number().nullable(),
    errorRate: z.number().nullable(),
    checkP99Seconds: z.number().nullable(),
    /**
     * Whether the error and p99 tiles' fault is over (lib/now-state): seconds from the service's
     * newest failed / slow check to the scrape that read it (0: no check since; null: none in any
     * live process), and the window's slow checks per second (the error tile's rate is `errorRates.total`).
     */
    errorQuietSeconds: z.number().nullable().optional(),
    slowCheckQuietSeconds: z.number().nullable().optional(),
    slowCheckRate: z.number().nullable().optional(),
  }).optional(),
  /** Dedup errors/s of the handler's service, by reason. */
  errorRates: availableSchema({ byReason: z.record(z.string(), z.number()), total: z.number() }),
  /**
   * Handler runs fail-open let through without a dedup check over 5 min (a count, not a rate), by
   * the failure's reason (`deduplication_unchecked_total`); "unknown" when the service does not
   * export that counter (never a total of 0).
   */
  unchecked: z
    .discriminatedUnion("status", [
      z.object({ status: z.literal("ok"), byReason: z.record(z.string(), z.number()), total: z.number() }),
      unavailableSchema,
      unknownSchema,
    ])
    .optional(),
  /** Keys in Redis (from the last inspection): the last completed count, split into settled keys and `processing` leases. */
  keys: availableSchema({
    count: z.number(),
    ...keyCountSchema.shape,
    scanDone: z.boolean(),
    /** Settled keys (done, marked, other): `count` − `processing`. */
    settled: z.number(),
    /** The split is a count (the sample held every key), not a scaled share. */
    splitExact: z.boolean(),
    /** Progress (0..1) of a recount running now, `null` when none runs: the shown count stays the last completed one. */
    recount: z.number().nullable(),
    /** Since when (ISO) Redis cannot be read: the count shown is the last one, kept with its time; `null` while Redis answers. */
    staleSince: z.string().nullable().optional(),
  }),
  /**
   * A loss of this handler's dedup memory (Redis restarted empty, flushed, failed over), held 30 min
   * after it was seen; `null` when none. `before`/`now` are the two counts, `share` the lost part of `before`.
   */
  memoryLost: z
    .object({
      share: z.number(),
      before: z.number(),
      now: z.number(),
      at: z.string(),
      cause: z.enum(["restart", "failover", "drop"]),
    })
    .nullable()
    .optional(),
  /**
   * DLQ records this handler poisoned that wait for a re-drive: every record in the DLQ topic's
   * retention (not a rate), by reason class, with the newest one's time; `complete: false` when the
   * bounded scan stopped early (a lower bound). `dlqTopic` is where they are.
   */
  dlqBacklog: availableSchema({
    total: z.number(),
    byReason: z.record(z.string(), z.number()),
    newestAt: z.string().nullable(),
    complete: z.boolean(),
    dlqTopic: z.string().nullable(),
  }).optional(),
  /**
   * Set in real mode while this app's process is younger than the 5-min window: its figures and
   * alerts still read what the metrics store kept from before it started (its previous process, or
   * another app that answered the same scrape), so the page says so. `null`/absent otherwise.
   */
  beforeStart: z.object({ appStartedAt: z.string(), windowSeconds: z.number() }).nullable().optional(),
  /** Alert instances belong to this handler or its service (the last known ones when `alertsUnknown`). */
  alerts: z.array(alertInstanceSchema),
  /** Set when the alert states cannot be read now: `alerts` is then the last known state, not the current one. */
  alertsUnknown: alertsUnknownSchema.nullable().optional(),
});
/** Per-handler row of the overview. */
export type OverviewHandler = z.infer<typeof overviewHandlerSchema>;

/** Answer of `GET /api/overview`. */
/**
 * One service's replicas as Prometheus scrapes them (`dedup_consumer_info{service, replica}` with
 * the scrape's `instance`) against the members of its consumer groups (by the replica id in each
 * member's clientId). `mismatch` = some member is not scraped, or a scraped replica is in no group.
 */
export const scrapeCoverageSchema = z.object({
  service: z.string(),
  /** Distinct `instance` labels (scrape targets) exporting a replica of the service. */
  instances: z.number().int(),
  /** Replica ids Prometheus sees, sorted. */
  scrapedReplicas: z.array(z.string()),
  /** Replica ids in the service's consumer groups, sorted. */
  memberReplicas: z.array(z.string()),
  /** Members Prometheus does not scrape: their traffic is missing from every figure. */
  unscraped: z.array(z.string()),
  /** Scraped replicas in no group (stopped within Prometheus's staleness window, or not joined yet). */
  notInGroups: z.array(z.string()),
  /** Share of the groups' assigned partitions held by scraped replicas (0..1); null without assignments. */
  scrapedShare: z.number().nullable(),
  mismatch: z.boolean(),
  /** The banner's sentence when `mismatch`, else null. */
  message: z.string().nullable(),
});
/** One service's scraped replicas against its consumer groups' members. */
export type ScrapeCoverage = z.infer<typeof scrapeCoverageSchema>;

export const overviewResponseSchema = answerSchema({
  mode: appModeSchema,
  range: rangeSchema,
  source: metricsSourceSchema,
  /** Health of the metrics source and of the dedup store. */
  upstream: z.object({ prometheus: upstreamSchema, store: upstreamSchema }),
  thresholds: thresholdsViewSchema,
  handlers: z.array(overviewHandlerSchema),
  /** All alert rules with their instances (unavailable when the alert source is down, with the last known). */
  alerts: alertsFieldSchema,
  /**
   * Per service, the replicas Prometheus scrapes against its consumer groups' members; null
   * without Kafka (embedded mode: one process, which the local registry sees whole).
   */
  scrapeCoverage: availableSchema({ services: z.array(scrapeCoverageSchema) }).nullable(),
});
/** Answer of `GET /api/overview`. */
export type OverviewResponse = z.infer<typeof overviewResponseSchema>;

/** `GET /api/overview?range=` */
export const overviewQuerySchema = z.object({ range: rangeSchema.default("1h") });
