/** Shapes of the live demo's switches: `GET|PUT /api/demo/sources` and `GET|PUT /api/demo/faults`. Isomorphic. */
import { z } from "zod";
import { appModeSchema } from "./common";

/** What both switch panels of the live demo answer first: the app's mode and whether the demo consumer runs at all (DEMO=off → false; the switches are then inert). */
const demoSwitchSchema = z.object({ mode: appModeSchema, running: z.boolean() });

/** The four duplicate sources of spec §1, plus the traffic itself, as switched on the live demo. */
export const demoSourcesSchema = demoSwitchSchema.extend({
  traffic: z.object({
    enabled: z.boolean(),
    /** Messages per second (0..5000). */
    ratePerSec: z.number(),
  }),
  /** (a) The handler fails at `rate` (0..1) of attempts; Retry runs it again. */
  retryOnError: z.object({ enabled: z.boolean(), rate: z.number() }),
  /**
   * (b) `replicas` extra in-process consumers (1..4) of the same group join, stay `periodMs`, leave,
   * and join again: every join/leave is a rebalance.
   */
  rebalance: z.object({ enabled: z.boolean(), replicas: z.number().int(), periodMs: z.number().int() }),
  /** (c) `rate` (0..1) of published messages are re-published with the same UUID after `delayMs`. */
  forwarderRepublish: z.object({ enabled: z.boolean(), rate: z.number(), delayMs: z.number().int() }),
  /**
   * (d) Every `periodMs` a replica joins that exits after its handler ran and before its offset
   * commit; the next owner of the partition re-reads.
   */
  restartBeforeCommit: z.object({ enabled: z.boolean(), periodMs: z.number().int() }),
});
/** State of the live demo's traffic and duplicate sources. */
export type DemoSources = z.infer<typeof demoSourcesSchema>;

/**
 * Limits of the live demo's numeric settings: the API refuses a value outside them (400 naming the
 * field and the range) and the form says the range instead of sending it.
 */
export const DEMO_LIMITS = {
  ratePerSec: { min: 0, max: 5000, unit: "msg/s" },
  latencyMs: { min: 0, max: 2000, unit: "ms" },
  errorRate: { min: 0, max: 1, unit: "" },
} as const;

/** A number in one of {@link DEMO_LIMITS}, refused outside it with the field's name and range. */
const limited = (field: keyof typeof DEMO_LIMITS, int = false) => {
  const { min, max, unit } = DEMO_LIMITS[field];
  const range = `${field} must be ${min}–${max}${unit ? ` ${unit}` : ""}`;
  const n = z.number(`${field} must be a number`);
  return (int ? n.int(`${field} must be a whole number`) : n).min(min, range).max(max, range);
};

/** A share of messages or attempts (0..1). */
const share = z.number().min(0).max(1);
/** How often a rebalance or a restart comes round: 2 s to 5 min. */
const periodMs = z.number().int().min(2000).max(300_000);

/** Body of `PUT /api/demo/sources`: any subset; omitted fields keep their value. */
export const demoSourcesPatchSchema = z
  .object({
    traffic: z.object({ enabled: z.boolean(), ratePerSec: limited("ratePerSec") }).partial(),
    retryOnError: z.object({ enabled: z.boolean(), rate: share }).partial(),
    rebalance: z.object({ enabled: z.boolean(), replicas: z.number().int().min(1).max(4), periodMs }).partial(),
    forwarderRepublish: z
      .object({ enabled: z.boolean(), rate: share, delayMs: z.number().int().min(0).max(600_000) })
      .partial(),
    restartBeforeCommit: z.object({ enabled: z.boolean(), periodMs }).partial(),
  })
  .partial()
  .strict();
/** Body of `PUT /api/demo/sources`. */
export type DemoSourcesPatch = z.infer<typeof demoSourcesPatchSchema>;

/** Store faults on the live demo's dedup repository. */
export const demoFaultsSchema = demoSwitchSchema.extend({
  /** Added latency per repository call, ms (0..2000). Drives the p99 panel. */
  latencyMs: z.number().int(),
  /** Fraction (0..1) of repository calls that fail (reason `redis_conn`). Drives the error-reason panel. */
  errorRate: z.number(),
  /**
   * Real mode only: the consumer's Redis connection is cut (its client disconnected) until
   * `until`; null when not cut. In embedded mode `available` is false.
   */
  redisCutoff: z.object({ available: z.boolean(), active: z.boolean(), until: z.string().nullable() }),
});
/** State of the live demo's store faults. */
export type DemoFaults = z.infer<typeof demoFaultsSchema>;

/** Body of `PUT /api/demo/faults`: any subset. `redisCutoffMs` > 0 cuts Redis for that long, 0 restores it now. */
export const demoFaultsPatchSchema = z
  .object({
    latencyMs: limited("latencyMs", true),
    errorRate: limited("errorRate"),
    redisCutoffMs: z.number().int().min(0).max(600_000),
  })
  .partial()
  .strict();
/** Body of `PUT /api/demo/faults`. */
export type DemoFaultsPatch = z.infer<typeof demoFaultsPatchSchema>;

/** The live demo's running totals, read from this process' registry (`GET /api/demo/effects`). */
export const demoEffectCountsSchema = z.object({
  /** Deliveries the handlers finished (`messages_processed_total{result="success"}`). */
  processed: z.number(),
  /** Copies the Deduplicator swallowed (`result="deduplicated"`). */
  deduplicated: z.number(),
  /** Handler attempts that threw (`handler_execution_time_seconds_count{success="false"}`): each is retried or ends in the DLQ. */
  handlerErrors: z.number(),
  /** Keys released after a failed attempt so the next attempt runs the handler (`deduplication_released_total`). */
  released: z.number(),
  /** Messages sent to the DLQ (`messages_poisoned_total`). */
  poisoned: z.number(),
  /** Failed store calls (`deduplication_errors_total`). */
  dedupErrors: z.number(),
  /** Pushes sent, and pushes for an event id already pushed (`demo_side_effects_total`, `demo_duplicate_side_effects_total`). */
  sideEffects: z.number(),
  duplicateSideEffects: z.number(),
});
/** The live demo's running totals. */
export type DemoEffectCounts = z.infer<typeof demoEffectCountsSchema>;

/**
 * `GET /api/demo/effects`: the demo consumer's totals in this process at `at`, for the switches'
 * "since the marker" figures (the page keeps the marker and subtracts). `checkBuckets` are the
 * cumulative counts of the dedup check's duration histogram (`le` in seconds, null for +Inf).
 */
export const demoEffectsSchema = demoSwitchSchema.extend({
  service: z.string(),
  at: z.string(),
  counts: demoEffectCountsSchema,
  checkBuckets: z.array(z.object({ le: z.number().nullable(), count: z.number() })),
});
/** `GET /api/demo/effects`. */
export type DemoEffects = z.infer<typeof demoEffectsSchema>;
