/** Shapes of the audit trail `GET /api/audit`: every state-changing action, who did it, what it matched. Isomorphic. */
import { z } from "zod";
import { answerSchema } from "./common";

/**
 * Every action the trail records, written once: the audit page's filter offers them and the chart
 * markers give each a kind (server/audit/markers.ts; a missing kind is a type error there).
 */
export const AUDIT_ACTIONS = [
  "keys.forget",
  "keys.ttl",
  "dlq.redrive",
  "dlq.discard",
  "dlq.replay",
  "workshop.run",
  "demo.faults",
  "demo.sources",
  "silence.create",
  "silence.expire",
] as const;
/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did an action beyond the name: how the request proved it, e-mail, strongest role, client address. */
export const auditPrincipalSchema = z.object({
  /** `token`, `local`, `proxy`, `oidc`, `anonymous`. */
  source: z.string().optional(),
  email: z.string().optional(),
  /** The strongest role the user had anywhere (`viewer`, `operator`, `admin`); absent: none. */
  role: z.string().optional(),
  /** The grants in words, e.g. `operator: billing`. */
  roles: z.string().optional(),
  /** The client's address as the request proves it. */
  address: z.string().optional(),
});
/** See {@link auditPrincipalSchema}. */
export type AuditPrincipal = z.infer<typeof auditPrincipalSchema>;

/** One state-changing action as the audit trail keeps it. */
export const auditEntrySchema = z.object({
  id: z.string(),
  /** ISO-8601. */
  at: z.string(),
  /**
   * The user (AUTH_MODE=proxy/oidc: the name the proxy or the sign-in gave), or in token mode
   * `token` (WORKSHOP_TOKEN), `local` (this machine); `cli (<user>)` (`npm run dlq:replay`).
   */
  who: z.string(),
  /** Who did it beyond the name (empty for entries written before the trail kept it, and for the CLI). */
  principal: auditPrincipalSchema.default({}),
  /** What was done: `keys.forget`, `keys.ttl`, `dlq.redrive`, `dlq.discard`, `dlq.replay` (the CLI), `workshop.run`, `demo.faults`, `demo.sources`, `silence.create`, `silence.expire`. */
  action: z.string(),
  /** The selection / filter / body, as given. */
  filter: z.record(z.string(), z.unknown()),
  dryRun: z.boolean(),
  matched: z.number().nullable(),
  changed: z.number().nullable(),
  /**
   * `started` (written before the action: a change is never done without its entry; one that stays
   * `started` was cut short), `ok`, `error: <detail>`, or `refused: <why>` (403: the role does not
   * allow it; nothing was done).
   */
  result: z.string(),
  /** The `service` and `handler` the action concerns (none: the whole app); its chart markers show on those pages. */
  scope: z.record(z.string(), z.string()),
  /**
   * What the action touched, by kind (`uuids`, `keys`, `sourceOffsets`, `destinationOffsets`,
   * `silenceId`, …): the first {@link AUDIT_TOUCHED_MAX} items of each and how many there were in
   * all (`total` above `items.length`: the rest are counted, not listed). Empty for entries that
   * touched nothing countable (a switch) and for entries written before the trail kept it.
   */
  touched: z.record(z.string(), z.object({ items: z.array(z.string()), total: z.number() })),
});
/** Items of one kind an audit entry lists (the rest are counted in `total`). */
export const AUDIT_TOUCHED_MAX = 100;

/** One kind of what an action touched, bounded to {@link AUDIT_TOUCHED_MAX} items. */
export function touchedList(
  items: readonly string[],
  total: number = items.length,
): { items: string[]; total: number } {
  return { items: items.slice(0, AUDIT_TOUCHED_MAX), total };
}

/** One audit entry. */
export type AuditEntry = z.infer<typeof auditEntrySchema>;

/** Answer of `GET /api/audit`. */
export const auditResponseSchema = answerSchema({
  /** `postgres` (survives restarts) or `memory` (this process only: DATABASE_URL is not set). */
  store: z.enum(["postgres", "memory"]),
  entries: z.array(auditEntrySchema),
});
/** Answer of `GET /api/audit`. */
export type AuditResponse = z.infer<typeof auditResponseSchema>;

/** `GET /api/audit?action=&limit=` */
export const auditQuerySchema = z.object({
  action: z.string().min(1).max(100).optional(),
  /** Only this user's entries (AUTH_MODE=proxy/oidc: everyone but an admin sees only their own). */
  who: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
