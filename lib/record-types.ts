/**
 * Shapes of `GET /api/records` (one Kafka record by position, or the records holding a message
 * UUID) and of the DLQ browser (`GET /api/dlq`, `POST /api/dlq/redrive`), as zod schemas with their
 * types. Isomorphic: the server builds them, the UI and the route tests parse them.
 */
import { z } from "zod";
import { POISON_REASON_CLASSES } from "@/names/dedup";

/** A Kafka topic name (the broker's own rule). */
export const topicNameSchema = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, "expected a Kafka topic name");

/** Bytes shown as text: UTF-8 when they are valid UTF-8, else base64 — the encoding is always named. */
export const encodedSchema = z.object({ encoding: z.enum(["utf-8", "base64"]), text: z.string() });
/** Bytes shown as text. */
export type Encoded = z.infer<typeof encodedSchema>;

/** One Kafka record as the message view shows it. */
export const recordViewSchema = z.object({
  topic: z.string(),
  partition: z.number(),
  /** Decimal string (a 64-bit offset). */
  offset: z.string(),
  /** The record's timestamp, ISO-8601. */
  timestamp: z.string(),
  key: encodedSchema.nullable(),
  headers: z.array(z.object({ key: z.string(), value: encodedSchema })),
  payload: encodedSchema.nullable(),
  /** Bytes of key, value and headers (keys and values) as read. */
  size: z.number(),
  /** The `_watermill_message_uuid` header, when there is exactly one readable. */
  uuid: z.string().nullable(),
});
/** One Kafka record as the message view shows it. */
export type RecordView = z.infer<typeof recordViewSchema>;

/** The per-request bounds of a scan (records read, bytes fetched, wall time). */
export const scanBoundsSchema = z.object({ records: z.number(), bytes: z.number(), ms: z.number() });
/** The per-request bounds of a scan. */
export type ScanBounds = z.infer<typeof scanBoundsSchema>;

/** Answer of `GET /api/records?topic=&partition=&offset=`. */
export const recordAnswerSchema = z.object({ kind: z.literal("record"), generatedAt: z.string(), record: recordViewSchema });

/** Answer of `GET /api/records?topic=&uuid=`. */
export const recordSearchSchema = z.object({
  kind: z.literal("search"),
  generatedAt: z.string(),
  topic: z.string(),
  uuid: z.string(),
  /** Newest first. */
  records: z.array(recordViewSchema),
  /** What this request read. */
  scanned: scanBoundsSchema,
  /** The documented bounds of one request. */
  limits: scanBoundsSchema.extend({ matches: z.number() }),
  /** `false`: a bound stopped the scan before the start of every partition. */
  complete: z.boolean(),
});

/** Answer of `GET /api/records`. */
export const recordsResponseSchema = z.discriminatedUnion("kind", [recordAnswerSchema, recordSearchSchema]);
/** Answer of `GET /api/records`. */
export type RecordsResponse = z.infer<typeof recordsResponseSchema>;

/** `GET /api/records?topic=&partition=&offset=` or `?topic=&uuid=`. */
export const recordsQuerySchema = z
  .object({
    topic: topicNameSchema,
    partition: z.coerce.number().int("expected a whole number").min(0, "expected ≥ 0").max(1_000_000, "expected ≤ 1000000").optional(),
    offset: z.string().regex(/^\d{1,19}$/, "expected a decimal offset").optional(),
    uuid: z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters").optional(),
  })
  .refine((q) => (q.uuid !== undefined ? q.partition === undefined && q.offset === undefined : q.partition !== undefined && q.offset !== undefined), {
    message: "give either partition and offset, or uuid",
  });

// ---------------------------------------------------------------------------------------------
// DLQ

/** The bounded reason class of a DLQ record (`reason_poisoned` classified). */
export const reasonClassSchema = z.enum(POISON_REASON_CLASSES as [string, ...string[]]);

/** One DLQ record in the DLQ browser. */
export const dlqEntrySchema = z.object({
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  /** When it was poisoned (the DLQ record's timestamp), ISO-8601. */
  poisonedAt: z.string(),
  uuid: z.string().nullable(),
  reasonClass: reasonClassSchema,
  /** `reason_poisoned`: the error's text. */
  reason: z.string(),
  handler: z.string(),
  /** `topic_poisoned`: where a re-drive publishes. */
  topicPoisoned: z.string(),
  subscriber: z.string(),
  /** Whether a re-drive may publish it: it has a UUID and its topic is an allowed consumer topic. */
  redrivable: z.boolean(),
  /** Why not, when not. */
  notRedrivable: z.string().optional(),
  size: z.number(),
});
/** One DLQ record in the DLQ browser. */
export type DlqEntry = z.infer<typeof dlqEntrySchema>;

/** Answer of `GET /api/dlq`. */
export const dlqResponseSchema = z.object({
  generatedAt: z.string(),
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

/** `GET /api/dlq?topic=&handler=&reason=&cursor=&limit=` */
export const dlqQuerySchema = z.object({
  topic: topicNameSchema.optional(),
  handler: z.string().min(1).max(200).optional(),
  reason: reasonClassSchema.optional(),
  cursor: z.string().max(4000).regex(/^\d+:\d+(,\d+:\d+)*$/, "expected a cursor returned by a previous page").optional(),
  limit: z.coerce.number().int().min(1, "expected ≥ 1").max(200, "expected ≤ 200").default(50),
});

/** Body of `POST /api/dlq/redrive`: UUIDs, or a filter; a dry run by default. */
export const redriveBodySchema = z
  .object({
    topic: topicNameSchema.optional(),
    uuids: z.array(z.string().min(1).max(200)).min(1).max(1000).optional(),
    filter: z.object({ handler: z.string().min(1).max(200).optional(), reason: reasonClassSchema.optional() }).strict().optional(),
    dryRun: z.boolean().default(true),
  })
  .strict()
  .refine((b) => (b.uuids === undefined) !== (b.filter === undefined), { message: "give either uuids or filter" });

/** What a re-drive would send (the preview) or sent. */
export const redrivePreviewSchema = z.object({ uuid: z.string(), topic: z.string(), handler: z.string(), reasonClass: z.string(), offset: z.string(), partition: z.number() });

/** Answer of `POST /api/dlq/redrive`. */
export const redriveResponseSchema = z.object({
  dryRun: z.boolean(),
  /** DLQ records that matched and may be re-driven. */
  matched: z.number(),
  /** Published (0 in a dry run). */
  redriven: z.number(),
  /** Matched but not re-drivable (no UUID, or an origin topic outside the allow-list). */
  skipped: z.number(),
  /** The first matched records: what would be (or was) sent. */
  preview: z.array(redrivePreviewSchema),
  /** `false`: the scan bound stopped before the start of the DLQ; re-run for older records. */
  complete: z.boolean(),
});
/** Answer of `POST /api/dlq/redrive`. */
export type RedriveResponse = z.infer<typeof redriveResponseSchema>;
