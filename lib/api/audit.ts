/** Shapes of the audit trail `GET /api/audit`: every state-changing action, who did it, what it matched. Isomorphic. */
import { z } from "zod";
import { answerSchema } from "./common";

/**
 * Every action the trail records, written once: the audit page's filter offers them and the chart
 * markers give each a kind (server/audit/markers.ts; a missing kind is a type error there).
 */
export const AUDIT_ACTIONS = ["keys.forget", "keys.ttl", "dlq.redrive", "dlq.discard", "dlq.replay", "workshop.run", "demo.faults", "demo.sources", "silence.create", "silence.expire"] as const;
/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One state-changing action as the audit trail keeps it. */
export const auditEntrySchema = z.object({
  id: z.string(),
  /** ISO-8601. */
  at: z.string(),
  /** `token` (WORKSHOP_TOKEN), `local` (this machine), `embedded` (the open one-process demo), `cli (<user>)` (`npm run dlq:replay`). */
  who: z.string(),
  /** What was done: `keys.forget`, `keys.ttl`, `dlq.redrive`, `dlq.discard`, `dlq.replay` (the CLI), `workshop.run`, `demo.faults`, `demo.sources`, `silence.create`, `silence.expire`. */
  action: z.string(),
  /** The selection / filter / body, as given. */
  filter: z.record(z.string(), z.unknown()),
  dryRun: z.boolean(),
  matched: z.number().nullable(),
  changed: z.number().nullable(),
  /** `ok`, or `error: <detail>`. */
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
export function touchedList(items: readonly string[], total: number = items.length): { items: string[]; total: number } {
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
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
