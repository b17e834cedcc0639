/** Shapes of the key actions `POST /api/keys/forget` and `POST /api/keys/ttl`. Isomorphic. */
import { z } from "zod";
import { bulkActionAnswerSchema } from "./common";

const name = z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f:*?[\]\\]+$/, "expected a name without control characters, ':' or glob characters");

/** Which keys of one handler an action touches: by UUID list, or every key (optionally by state and idle time). */
export const keySelectionSchema = z
  .object({
    service: name,
    handler: name,
    /** Message UUIDs (the last segment of the key); absent = every key of the handler. */
    uuids: z.array(z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f*?[\]\\]+$/, "expected a UUID")).min(1).max(10_000).optional(),
    /** Only keys in this state: `processing` (leases, e.g. stuck ones) or `done`. */
    state: z.enum(["processing", "done"]).optional(),
    /** Only keys idle at least this long (Redis `OBJECT IDLETIME`: since last written or checked). */
    olderThanMs: z.number().int().min(1).max(365 * 86_400_000).optional(),
    /** Count only, change nothing. The UI's default. @default true */
    dryRun: z.boolean().default(true),
  })
  .strict();

/** Body of `POST /api/keys/forget`. */
export const forgetBodySchema = keySelectionSchema;
/** Body of `POST /api/keys/forget`. */
export type ForgetBody = z.infer<typeof forgetBodySchema>;

/** Body of `POST /api/keys/ttl`. */
export const ttlBodySchema = keySelectionSchema.extend({
  /** The TTL to set, ms (at least a second). */
  ttlMs: z.number().int().min(1000).max(365 * 86_400_000),
  /** Must be true to set a TTL above the handler's TTL policy: the answer says it is beyond. @default false */
  allowBeyondPolicy: z.boolean().default(false),
});
/** Body of `POST /api/keys/ttl`. */
export type TtlBody = z.infer<typeof ttlBodySchema>;

/**
 * What a key action answers: `matched` keys of the selection (inside `DEDUP_PREFIXES`) under the
 * handler's `prefix`; `complete: false` when the bound of one call (keys scanned, Redis budget)
 * stopped it.
 */
const keyActionAnswerSchema = bulkActionAnswerSchema.extend({ prefix: z.string() });

/** Answer of `POST /api/keys/forget`. */
export const forgetResponseSchema = keyActionAnswerSchema.extend({
  /** Keys deleted (`UNLINK`); 0 in a dry run. */
  deleted: z.number(),
});
/** Answer of `POST /api/keys/forget`. */
export type ForgetResponse = z.infer<typeof forgetResponseSchema>;

/** Answer of `POST /api/keys/ttl`. */
export const ttlResponseSchema = keyActionAnswerSchema.extend({
  /** Keys whose TTL was set; 0 in a dry run. */
  changed: z.number(),
  ttlMs: z.number(),
  /** The handler's TTL policy: its declared window, else the default class's. */
  policyMs: z.number(),
  policySource: z.enum(["declared", "default"]),
  /** The TTL set is longer than the policy allows (only with `allowBeyondPolicy`). */
  beyondPolicy: z.boolean(),
});
/** Answer of `POST /api/keys/ttl`. */
export type TtlResponse = z.infer<typeof ttlResponseSchema>;
