/** Shapes of `GET /api/capacity`: projected keys and bytes per handler next to what the store holds. Isomorphic. */
import { z } from "zod";
import { answerSchema, availableSchema, handlerPrefixSchema, metricsSourceSchema } from "./common";
import { keyCountSchema } from "./handlers";

// ---------------------------------------------------------------------------------------------
// GET /api/capacity

/** Capacity projection of one handler next to what Redis holds. */
export const capacityHandlerSchema = handlerPrefixSchema.extend({
  /** Window used for the projection and where it came from. */
  ttlMs: z.number().nullable(),
  ttlSource: z.enum(["declared", "observed", "default"]),
  /** New (non-deduplicated) messages/s over 5 min; unavailable when metrics are down. */
  newRate: availableSchema({ value: z.number().nullable() }),
  /**
   * How much of the TTL window has passed since keys began to be written: from the oldest settled
   * key in Redis (window − its remaining TTL), or, without Redis (embedded, in-memory store), the
   * process start. While `filled` < 1 the projection covers only the filled share and gap notes
   * wait until `validAt`. `null` when unknown.
   */
  window: z
    .object({
      ageMs: z.number(),
      filled: z.number(),
      validAt: z.string().nullable(),
      source: z.enum(["oldest-key", "process-start"]),
    })
    .nullable(),
  /** newRate × min(TTL, window age). `null` when the rate is unknown. */
  projectedKeys: z.number().nullable(),
  /** projectedKeys × bytesPerKey. */
  projectedBytes: z.number().nullable(),
  /** What the store holds: the last completed count of `keys`, and their bytes. */
  measured: availableSchema({
    keys: z.number(),
    ...keyCountSchema.shape,
    bytesPerKey: z.number().nullable(),
    bytes: z.number().nullable(),
  }),
  /** measured / projected keys (1 = as expected); `null` when either side is unknown or projected is 0. */
  gapRatio: z.number().nullable(),
  /** Human notes on a gap: "keys without TTL", "more keys than projected: stale keys or a longer TTL"… */
  notes: z.array(z.string()),
});
/** Capacity projection of one handler. */
export type CapacityHandler = z.infer<typeof capacityHandlerSchema>;

/** Answer of `GET /api/capacity`. */
export const capacityResponseSchema = answerSchema({
  source: metricsSourceSchema,
  handlers: z.array(capacityHandlerSchema),
  totals: z.object({
    projectedKeys: z.number().nullable(),
    measuredKeys: z.number().nullable(),
    measuredBytes: z.number().nullable(),
  }),
});
/** Answer of `GET /api/capacity`. */
export type CapacityResponse = z.infer<typeof capacityResponseSchema>;
