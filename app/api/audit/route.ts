import { auditQuerySchema } from "@/lib/api/audit";
import { auditStore, auditUnavailable } from "@/server/audit";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/audit?action=&limit=` → `{ store, entries }`, newest first: every state-changing action
 * (when, who, what, filter, matched/changed, result). `store: "memory"` says the trail is this
 * process's only (no `DATABASE_URL`): a restart loses it. A 503 "audit store unavailable: …" while
 * the database does not answer.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, auditQuerySchema, async (q) => {
    const store = auditStore();
    try {
      return { generatedAt: new Date().toISOString(), store: store.kind, entries: await store.list(q) };
    } catch (e) {
      throw auditUnavailable(e, "the trail cannot be read; actions that change state are refused until it answers");
    }
  });
}
