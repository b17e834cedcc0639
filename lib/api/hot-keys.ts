/**
 * Shape of `GET /api/hot-keys?service=&handler=`: the UUIDs a handler swallowed most often in the
 * last one to two windows, from the Deduplicators' space-saving sketches (`server/dedup/hot-keys.ts`).
 * Isomorphic: the server builds it, the handler page and the route tests parse it.
 */
import { z } from "zod";
import { answerSchema, handlerRefSchema } from "./common";
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
  byCause: z.record(z.enum(DUPLICATE_CAUSES as [DuplicateCause, ...DuplicateCause[]]), z.number()),
  /** Position `topic:partition:offset` of the latest copy, when the transport gave one. */
  lastPosition: z.string().nullable(),
  /** ISO time of the latest copy. */
  lastAt: z.string(),
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
  /** Deduplicators (replicas) of this process whose sketches were merged. */
  sketches: z.number(),
  /** What the table covers: this process's replicas (each process keeps its own sketches). */
  scope: z.literal("process"),
  keys: z.array(hotKeySchema),
});
/** Answer of `GET /api/hot-keys`. */
export type HotKeysResponse = z.infer<typeof hotKeysResponseSchema>;
