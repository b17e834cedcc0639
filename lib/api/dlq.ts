/** Shapes of the DLQ browser `GET /api/dlq` and of `POST /api/dlq/redrive`. Isomorphic. */
import { z } from "zod";
import { answerSchema, bulkActionAnswerSchema, topicNameSchema } from "./common";
import { maskedListSchema } from "./masking";
import { recordPositionSchema, scanBoundsSchema } from "./records";
import { POISON_REASON_CLASSES } from "@/names/dedup";
import { REDRIVE_MODES } from "@/names/dlq";
import { DLQ_CONVENTIONS } from "@/names/dlq-conventions";

/** The bounded reason class of a DLQ record (`reason_poisoned` classified). */
export const reasonClassSchema = z.enum(POISON_REASON_CLASSES as [string, ...string[]]);

/**
 * What became of a DLQ record: `open` (waits: counted in the backlog), `redriven` (published back,
 * see `resolution.to`), `discarded` (an engineer decided it needs nothing: `resolution.why`),
 * `expired` (its position is below the partition's low watermark: it left the log).
 */
export const DLQ_STATES = ["open", "redriven", "discarded", "expired"] as const;
/** One of {@link DLQ_STATES}. */
export type DlqState = (typeof DLQ_STATES)[number];

/** Who resolved a record, when, and how: the destination of a re-drive, the reason of a discard. */
export const dlqResolutionSchema = z.object({
  at: z.string(),
  who: z.string(),
  why: z.string().optional(),
  to: z
    .object({ topic: z.string(), partition: z.number().optional(), offset: z.string().optional(), uuid: z.string() })
    .optional(),
});

/** One DLQ record in the DLQ browser. */
export const dlqEntrySchema = recordPositionSchema.extend({
  state: z.enum(DLQ_STATES),
  /** Set when `redriven` or `discarded`. */
  resolution: dlqResolutionSchema.optional(),
  /** When it was poisoned (the DLQ record's timestamp), ISO-8601. */
  poisonedAt: z.string(),
  uuid: z.string().nullable(),
  reasonClass: reasonClassSchema,
  /** `reason_poisoned`: the error's text. */
  reason: z.string(),
  handler: z.string(),
  /** The original topic (`topic_poisoned`, Spring's `kafka_dlt-original-topic`, Connect's `__connect.errors.topic`): where a re-drive publishes. */
  topicPoisoned: z.string(),
  subscriber: z.string(),
  /** Which DLQ header convention the record was read by (`watermill`, `spring`, `connect`, `none`). */
  convention: z.enum(DLQ_CONVENTIONS),
  /** What `handler` names: PoisonQueue's handler, a Spring record's original consumer group, a Connect record's connector. */
  handlerIs: z.enum(["handler", "consumer-group", "connector"]),
  /** Where the original record was, when the convention records it (Spring, Connect; `null` otherwise). */
  original: z.object({
    partition: z.number().nullable(),
    offset: z.string().nullable(),
    timestamp: z.string().nullable(),
  }),
  /** The exception's class (Spring's `kafka_dlt-exception-fqcn`, Connect's `exception.class.name`); `null` when only a text was written. */
  exceptionClass: z.string().nullable(),
  /** Whether a re-drive may publish it: it has a UUID and its topic is an allowed consumer topic. */
  redrivable: z.boolean(),
  /** Why not, when not. */
  notRedrivable: z.string().optional(),
  size: z.number(),
  /** What `MASK_RULES` masked for this caller (its texts read from the masked headers); absent when the caller sees the record whole. */
  masked: maskedListSchema,
});
/** One DLQ record in the DLQ browser. */
export type DlqEntry = z.infer<typeof dlqEntrySchema>;

/** Answer of `GET /api/dlq`. */
export const dlqResponseSchema = answerSchema({
  topic: z.string(),
  entries: z.array(dlqEntrySchema),
  /** Per reason class, over the records this page scanned (matching the handler filter). */
  reasons: z.record(z.string(), z.number()),
  /** Resume here for older records; `null` when the start of every partition was reached. */
  cursor: z.string().nullable(),
  scanned: scanBoundsSchema,
  limits: scanBoundsSchema,
});
/** Answer of `GET /api/dlq`. */
export type DlqResponse = z.infer<typeof dlqResponseSchema>;

/** `GET /api/dlq?topic=&handler=&reason=&state=&cursor=&limit=` (`state` default `open`: what still waits). */
export const dlqQuerySchema = z.object({
  state: z.enum([...DLQ_STATES, "any"]).default("open"),
  topic: topicNameSchema.optional(),
  handler: z.string().min(1).max(200).optional(),
  reason: reasonClassSchema.optional(),
  cursor: z
    .string()
    .max(4000)
    .regex(/^\d+:\d+(,\d+:\d+)*$/, "expected a cursor returned by a previous page")
    .optional(),
  limit: z.coerce.number().int().min(1, "expected ≥ 1").max(200, "expected ≤ 200").default(50),
});

/** Body of `POST /api/dlq/redrive`: UUIDs, or a filter; a dry run by default. */
export const redriveBodySchema = z
  .object({
    topic: topicNameSchema.optional(),
    uuids: z.array(z.string().min(1).max(200)).min(1).max(1000).optional(),
    filter: z
      .object({ handler: z.string().min(1).max(200).optional(), reason: reasonClassSchema.optional() })
      .strict()
      .optional(),
    /**
     * `same-uuid` (the same event again) or `new-uuid` (a UUID derived from the DLQ position, the
     * original kept in `redriven_from_uuid`) for every record; absent: `new-uuid` for a
     * `payload_conflict` record, `same-uuid` for the others. A same-UUID re-drive of a payload
     * conflict is refused per record (it would loop).
     */
    mode: z.enum(REDRIVE_MODES).optional(),
    /** A real re-drive of a `filter` sends exactly what this dry run showed (required for a filter; a dry run's answer gives it). */
    previewId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/, "expected the previewId of a dry run")
      .optional(),
    dryRun: z.boolean().default(true),
  })
  .strict()
  .refine((b) => (b.uuids === undefined) !== (b.filter === undefined), { message: "give either uuids or filter" });

/** What a re-drive would send (the preview) or sent: `uuid` the DLQ record's, `sendUuid` the one it is published with (another in `new-uuid` mode). */
export const redrivePreviewSchema = recordPositionSchema.extend({
  uuid: z.string(),
  handler: z.string(),
  reasonClass: z.string(),
  mode: z.enum(REDRIVE_MODES),
  sendUuid: z.string(),
});

/** A matched record a re-drive leaves alone, and why (no UUID, a topic outside the allow-list, a same-UUID payload conflict that would loop). */
export const redriveSkippedSchema = recordPositionSchema.extend({
  uuid: z.string().nullable(),
  handler: z.string(),
  reasonClass: z.string(),
  why: z.string(),
});

/** Answer of `POST /api/dlq/redrive`: `matched` DLQ records may be re-driven; `complete: false` when the scan bound stopped before the start of the DLQ (re-run for older records). */
export const redriveResponseSchema = bulkActionAnswerSchema.extend({
  /** Published (0 in a dry run). */
  redriven: z.number(),
  /** Matched but not re-drivable (no UUID, or an origin topic outside the allow-list). */
  skipped: z.number(),
  /** Matched by the filter but already re-driven or discarded (left alone; name a UUID to re-drive it again). */
  notOpen: z.number().optional(),
  /** The first matched records: what would be (or was) sent. */
  preview: z.array(redrivePreviewSchema),
  /** The first skipped records, each with why. */
  skippedPreview: z.array(redriveSkippedSchema),
  /** Records published per second at most (`DLQ_REDRIVE_RATE`): a re-drive of N takes about N / rate seconds. */
  ratePerSecond: z.number(),
  /** A dry run of a filter: the id its real run sends to act on exactly these records (kept 5 min, used once). */
  previewId: z.string().optional(),
});
/** Answer of `POST /api/dlq/redrive`. */
export type RedriveResponse = z.infer<typeof redriveResponseSchema>;

/** Body of `POST /api/dlq/discard`: DLQ positions or UUIDs, the reason (required), a dry run by default. */
export const discardBodySchema = z
  .object({
    topic: topicNameSchema.optional(),
    positions: z
      .array(
        z
          .object({
            partition: z.number().int().min(0),
            offset: z.string().regex(/^\d{1,19}$/, "expected a decimal offset"),
          })
          .strict(),
      )
      .min(1)
      .max(1000)
      .optional(),
    uuids: z.array(z.string().min(1).max(200)).min(1).max(1000).optional(),
    why: z.string().trim().min(1, "say why these records need no re-drive").max(500),
    dryRun: z.boolean().default(true),
  })
  .strict()
  .refine((b) => (b.positions === undefined) !== (b.uuids === undefined), {
    message: "give either positions or uuids",
  });
/** Body of `POST /api/dlq/discard`. */
export type DiscardBody = z.infer<typeof discardBodySchema>;

/** Answer of `POST /api/dlq/discard`: `matched` open records found; `discarded` marked (0 in a dry run). */
export const discardResponseSchema = bulkActionAnswerSchema.extend({
  topic: z.string(),
  discarded: z.number(),
  /** Named but already re-driven or discarded: left as they are. */
  notOpen: z.number(),
  /** Named but not found in the log (below the low watermark, or no such record). */
  notFound: z.number(),
  /** The first matched records. */
  preview: z.array(
    recordPositionSchema.extend({ uuid: z.string().nullable(), handler: z.string(), reasonClass: z.string() }),
  ),
});
/** Answer of `POST /api/dlq/discard`. */
export type DiscardResponse = z.infer<typeof discardResponseSchema>;
