/**
 * Shape of `GET /api/hot-keys?service=&handler=`: the UUIDs a handler swallowed most often in the
 * last one to two windows, from the Deduplicators' space-saving sketches (`server/dedup/metrics/hot-keys.ts`),
 * merged over every process Prometheus scrapes (their exported top UUIDs) or, without Prometheus,
 * over this process's.
 * Isomorphic: the server builds it, the handler page and the route tests parse it.
 */
import { z } from "zod";
import { answerSchema, handlerRefSchema } from "./common";
import { unknownSchema } from "./measured";
import { nameParam } from "./series";
import { DUPLICATE_CAUSES, type DuplicateCause } from "@/names/dedup";

/** `GET /api/hot-keys?service=&handler=` */
export const hotKeysQuerySchema = z.object({ service: nameParam, handler: nameParam });

/** One hot key: counted copies (an upper bound), the bound's error, and what the copies were. */
export const hotKeySchema = z.object({
  key: z.string(),
  uuid: z.string(),
  topic: z.string(),
  /** Swallowed copies counted; the true count is in `[count − error, count]`. */
  count: z.number(),
  error: z.number(),
  /** Copies by cause (this process's sketches only: the exported gauge carries no cause, so empty in the fleet scope). */
  byCause: z.partialRecord(z.enum(DUPLICATE_CAUSES as [DuplicateCause, ...DuplicateCause[]]), z.number()),
  /** Position `topic:partition:offset` of the latest copy, when the transport gave one (process scope only). */
  lastPosition: z.string().nullable(),
  /** ISO time of the latest copy (process scope only; null in the fleet scope). */
  lastAt: z.string().nullable(),
});
/** One hot key. */
export type HotKeyView = z.infer<typeof hotKeySchema>;

/** Answer of `GET /api/hot-keys`. */
export const hotKeysResponseSchema = answerSchema({
  ...handlerRefSchema.shape,
  /** Start of the oldest window covered (ISO); null when nothing was swallowed lately. */
  since: z.string().nullable(),
  /** Length of one window (ms): the table covers the current window and the one before. */
  windowMs: z.number(),
  /** Copies swallowed in the windows covered (exact, over the merged sketches). */
  total: z.number(),
  /** Counters per sketch: a UUID with fewer than `total / capacity` copies may be missing. */
  capacity: z.number(),
  /** Deduplicators (replicas) of this process whose sketches were merged (process scope), or processes whose gauges were added up (fleet). */
  sketches: z.number(),
  /**
   * What the table covers: `fleet` — every process Prometheus scrapes, each exporting its top
   * UUIDs (`dedup_hot_uuid_copies`, summed by UUID); `process` — this process's replicas (embedded
   * mode, no Prometheus).
   */
  scope: z.enum(["process", "fleet"]),
  /**
   * Set when the service exports no hot-UUID gauge (`dedup_hot_uuid_error_bound`): the table is not
   * measured, which is not "nothing swallowed".
   */
  notMeasured: unknownSchema.nullable().optional(),
  /**
   * Fleet scope: set (the upstream's detail) when Prometheus did not answer; the table is then not
   * known (empty), which is neither "nothing swallowed" nor "not measured".
   */
  unavailable: z.string().nullable().optional(),
  /** Fleet scope: the summed error bounds — a UUID not listed had at most this many copies. */
  errorBound: z.number().optional(),
  keys: z.array(hotKeySchema),
});
/** Answer of `GET /api/hot-keys`. */
export type HotKeysResponse = z.infer<typeof hotKeysResponseSchema>;
