/** Shapes of the key browser `GET /api/keys?prefix=&cursor=&count=` and of `GET /api/keys/lookup?uuid=`. Isomorphic. */
import { z } from "zod";
import { parseLookupInput } from "@/lib/lookup-input";
import { answerSchema, handlerPrefixSchema, keyStateSchema } from "./common";
import { recordPositionSchema } from "./records";

// ---------------------------------------------------------------------------------------------
// GET /api/keys?prefix=&cursor=&count=   and   GET /api/keys/lookup?uuid=

/** One key of the key browser. */
export const keyEntrySchema = z.object({
  key: z.string(),
  /** Last `:` segment of the key (the message UUID). */
  uuid: z.string(),
  state: keyStateSchema,
  /** Remaining TTL in ms; -1 = no TTL (never expires: a bug); `null` = the key vanished meanwhile. */
  ttlMs: z.number().nullable(),
  /** `MEMORY USAGE key SAMPLES 0`; `null` when unknown. */
  bytes: z.number().nullable(),
  /** `bytes` is an estimate (embedded mode's in-memory store), not `MEMORY USAGE`. */
  bytesEstimated: z.boolean().optional(),
  /** The payload fingerprint the `done` mark keeps (the PostgreSQL inbox's `fingerprint` column); absent where not read. */
  fingerprint: z.string().nullable().optional(),
  /** The record of the first delivery, from a `done:<topic>:<partition>:<offset>` value; `null` for other values. */
  record: recordPositionSchema.nullable().optional(),
  /** The topic of the key's handler (declared in `dedup_handler_info`, else its metrics' `topic` label): where "find by UUID" searches; `null` when neither says. */
  topic: z.string().nullable().optional(),
});
/** One key of the key browser. */
export type KeyEntry = z.infer<typeof keyEntrySchema>;

/** Answer of `GET /api/keys`. */
export const keysResponseSchema = answerSchema({
  /** The literal handler prefix paged through. */
  prefix: z.string(),
  keys: z.array(keyEntrySchema),
  /** Opaque cursor for the next page; `null` when the scan is complete. */
  cursor: z.string().nullable(),
  /** Keys of `<prefix>:*` inside `DEDUP_PREFIXES` that this page's SCAN calls returned (keys outside the globs are never counted). */
  visited: z.number(),
  /** Where the page was read: the PostgreSQL inbox's table (rows in primary-key order); absent: the key store. */
  store: z.enum(["postgres-inbox"]).optional(),
});
/** Answer of `GET /api/keys`. */
export type KeysResponse = z.infer<typeof keysResponseSchema>;

/** Answer of `GET /api/keys/lookup`. */
export const keyLookupResponseSchema = answerSchema({
  uuid: z.string(),
  /** Handler prefixes checked (known from inspection and declarations). */
  checkedPrefixes: z.number(),
  matches: z.array(keyEntrySchema.extend(handlerPrefixSchema.shape)),
  /** Stores that could not be asked (the inbox's database down…), with why: a UUID not found there is not known absent. */
  notChecked: z.array(z.object({ store: z.string(), reason: z.string() })).optional(),
});
/** Answer of `GET /api/keys/lookup`. */
export type KeyLookupResponse = z.infer<typeof keyLookupResponseSchema>;

/** `GET /api/keys?prefix=&cursor=&count=`; `prefix` is the literal handler prefix (no glob). */
export const keysQuerySchema = z.object({
  prefix: z
    .string()
    .min(1, "expected a handler prefix such as notification:dedup:on-review-created")
    .max(512)
    .regex(/^[^\u0000-\u001f\u007f]+$/, "expected printable characters"),
  cursor: z
    .string()
    .max(4096)
    .regex(/^[A-Za-z0-9_.:@|\-]*$/, "expected a cursor returned by a previous page")
    .optional(),
  count: z.coerce
    .number()
    .int("expected a whole number")
    .min(1, "expected ≥ 1")
    .max(500, "expected ≤ 500")
    .default(100),
  /** Only keys in this state (`processing`: the leases — stuck ones among them); a page may then hold fewer keys. */
  state: keyStateSchema.optional(),
});
/**
 * `GET /api/keys/lookup?uuid=&prefix=`: `uuid` is a ULID (any case; looked up upper-case), a UUID,
 * or a whole key `<service>:dedup:<handler>:<id>` as `redis-cli --scan` prints it (its prefix then
 * replaces `prefix`); see `lib/lookup-input.ts`. `prefix`, optional, is one more handler prefix to
 * check (the one the key browser shows), for a prefix newer than the last inspection. It is checked
 * against `DEDUP_PREFIXES` like the others.
 */
export const keyLookupQuerySchema = z
  .object({
    uuid: z
      .string()
      .max(600, "expected a message id or one dedup key")
      .transform((s, ctx) => {
        const p = parseLookupInput(s);
        if (!p.ok) ctx.addIssue({ code: "custom", message: p.error });
        return p;
      }),
    prefix: keysQuerySchema.shape.prefix.optional(),
  })
  .transform(({ uuid, prefix }) => (uuid.ok ? { uuid: uuid.id, prefix: uuid.prefix ?? prefix } : { uuid: "", prefix }));
