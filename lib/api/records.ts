/**
 * Shapes of `GET /api/records`: one Kafka record by position, or the records holding a message
 * UUID. Isomorphic: the server builds them, the UI and the route tests parse them.
 */
import { z } from "zod";
import { answerSchema, topicNameSchema } from "./common";
import { maskedListSchema } from "./masking";

/** Bytes shown as text: UTF-8 when they are valid UTF-8, else base64 — the encoding is always named. */
export const encodedSchema = z.object({ encoding: z.enum(["utf-8", "base64"]), text: z.string() });
/** Bytes shown as text. */
export type Encoded = z.infer<typeof encodedSchema>;

/** Where a Kafka record is: its topic, partition and offset (a decimal string: offsets are 64-bit). */
export const recordPositionSchema = z.object({ topic: z.string(), partition: z.number(), offset: z.string() });

/** One Kafka record as the message view shows it. */
export const recordViewSchema = recordPositionSchema.extend({
  /** The record's timestamp, ISO-8601. */
  timestamp: z.string(),
  key: encodedSchema.nullable(),
  /**
   * Header entries in order. `number`: a header a DLQ convention writes as a binary number (Spring
   * Kafka's `kafka_dlt-original-partition` / `-offset` / `-timestamp`), read as such, with how.
   */
  headers: z.array(
    z.object({
      key: z.string(),
      value: encodedSchema,
      number: z.object({ text: z.string(), as: z.string() }).optional(),
    }),
  ),
  payload: encodedSchema.nullable(),
  /** Bytes of key, value and headers (keys and values) as read. */
  size: z.number(),
  /** The `_watermill_message_uuid` header, when there is exactly one readable. */
  uuid: z.string().nullable(),
  /** What `MASK_RULES` masked for this caller (a role without `unmasked`); absent when the caller sees the record whole. */
  masked: maskedListSchema,
});
/** One Kafka record as the message view shows it. */
export type RecordView = z.infer<typeof recordViewSchema>;

/** The per-request bounds of a scan (records read, bytes fetched, wall time). */
export const scanBoundsSchema = z.object({ records: z.number(), bytes: z.number(), ms: z.number() });
/** The per-request bounds of a scan. */
export type ScanBounds = z.infer<typeof scanBoundsSchema>;

/** Answer of `GET /api/records?topic=&partition=&offset=`. */
export const recordAnswerSchema = answerSchema({ kind: z.literal("record"), record: recordViewSchema });

/** Answer of `GET /api/records?topic=&uuid=`. */
export const recordSearchSchema = answerSchema({
  kind: z.literal("search"),
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
    partition: z.coerce
      .number()
      .int("expected a whole number")
      .min(0, "expected ≥ 0")
      .max(1_000_000, "expected ≤ 1000000")
      .optional(),
    offset: z
      .string()
      .regex(/^\d{1,19}$/, "expected a decimal offset")
      .optional(),
    uuid: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters")
      .optional(),
  })
  .refine(
    (q) =>
      q.uuid !== undefined
        ? q.partition === undefined && q.offset === undefined
        : q.partition !== undefined && q.offset !== undefined,
    {
      message: "give either partition and offset, or uuid",
    },
  );
