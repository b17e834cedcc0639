/** Shapes of the key actions `POST /api/keys/forget` and `POST /api/keys/ttl`. Isomorphic. */
import { z } from "zod";
import { bulkActionAnswerSchema, keyStateSchema } from "./common";

const name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000-\u001f\u007f:*?[\]\\]+$/, "expected a name without control characters, ':' or glob characters");

/** The states an action may select: `processing` (leases), `done` (every done form: plain, position, fingerprint, the naive `1`) or `any`. */
export const ACTION_STATES = ["processing", "done", "any"] as const;

/**
 * Which keys of one handler an action touches: by UUID list, or the keys of an explicitly chosen
 * state (optionally idle for a while). **A selection of a whole prefix needs `state`** (`any` to
 * mean every key), so a lost form field cannot widen it; a real action on a whole prefix acts on a
 * dry run's `previewId` (the keys that dry run listed, each only while its value is unchanged).
 */
export const keySelectionSchema = z
  .object({
    service: name,
    handler: name,
    /** Message UUIDs (the last segment of the key); absent = the keys of `state`. */
    uuids: z
      .array(
        z
          .string()
          .min(1)
          .max(200)
          .regex(/^[^\u0000-\u001f\u007f*?[\]\\]+$/, "expected a UUID"),
      )
      .min(1)
      .max(10_000)
      .optional(),
    /** Only keys in this state; `any` must be chosen to mean every key. Required without `uuids`. */
    state: z.enum(ACTION_STATES).optional(),
    /** Only keys idle at least this long (Redis `OBJECT IDLETIME`: since last written or checked). 400 under an LFU eviction policy, which keeps no idle time. */
    olderThanMs: z
      .number()
      .int()
      .min(1)
      .max(365 * 86_400_000)
      .optional(),
    /** Which leases (`processing:` keys) may be selected: `dead` (only those whose owner replica is not alive) or `all`. @default "dead" */
    leases: z.enum(["dead", "all"]).default("dead"),
    /** A real action: the dry run's `previewId`; it acts on exactly that dry run's keys. Required for a real action without `uuids`. */
    previewId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/, "expected a previewId from a dry run")
      .optional(),
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
  ttlMs: z
    .number()
    .int()
    .min(1000)
    .max(365 * 86_400_000),
  /** Must be true to set a TTL above the handler's TTL policy: the answer says it is beyond. @default false */
  allowBeyondPolicy: z.boolean().default(false),
});
/** Body of `POST /api/keys/ttl`. */
export type TtlBody = z.infer<typeof ttlBodySchema>;

/** Keys of a selection listed in an answer (the first ones; `matched` counts them all). */
export const LISTED_KEYS_MAX = 50;

/** One key of a selection as the dry run read it. */
export const listedKeySchema = z.object({
  key: z.string(),
  state: keyStateSchema,
  /** `OBJECT IDLETIME` in ms (since last written or read); null where Redis keeps none (LFU policy, in-memory store). */
  idleMs: z.number().nullable(),
  /** Remaining TTL, ms; null without one. */
  ttlMs: z.number().nullable(),
  /** A lease's owner replica (`<hostname>-<pid>`, from its token); null when its token names none. */
  owner: z.string().nullable(),
  /** Whether that owner is alive (a consumer-group member or a scraped replica); null: not a lease, no owner, or not known. */
  ownerAlive: z.boolean().nullable(),
});
/** One key of a selection as the dry run read it. */
export type ListedKey = z.infer<typeof listedKeySchema>;

/** The selection an answer acted on, restated (the preview's, for a real action with `previewId`). */
export const selectionSchema = z.object({
  state: z.enum(ACTION_STATES).nullable(),
  olderThanMs: z.number().nullable(),
  leases: z.enum(["dead", "all"]),
  uuids: z.number().nullable(),
});
/** The selection an answer acted on. */
export type Selection = z.infer<typeof selectionSchema>;

/**
 * What a key action answers: `matched` keys of the selection (inside `DEDUP_PREFIXES`) under the
 * handler's `prefix`; `complete: false` when the bound of one call (keys scanned, Redis budget)
 * stopped it. A dry run lists the first {@link LISTED_KEYS_MAX} keys and keeps all it matched for
 * a few minutes under `previewId` (null, with `note`, when they could not be kept).
 */
const keyActionAnswerSchema = bulkActionAnswerSchema.extend({
  prefix: z.string(),
  selection: selectionSchema,
  previewId: z.string().nullable(),
  /** When the dry run that chose the keys read them (ISO). */
  previewAt: z.string(),
  keys: z.array(listedKeySchema),
  /** Leases of a live owner left out of the selection (`leases: "dead"`). */
  liveLeasesLeft: z.number(),
  /** Real action: keys of the preview whose value changed (or that are gone) since it was read, left alone. */
  skipped: z.number(),
  note: z.string().optional(),
});

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
