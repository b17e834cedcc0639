import { auditQuerySchema } from "@/lib/api/audit";
import { auditStore, auditUnavailable } from "@/server/audit";
import { may, principalOf } from "@/server/auth/principal";
import { config } from "@/server/config";
import { handleQuery, HttpError } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/audit?action=&who=&limit=` → `{ store, entries }`, newest first: every state-changing
 * action (when, who, what, filter, matched/changed, result). `store: "memory"` says the trail is this
 * process's only (no `DATABASE_URL`): a restart loses it. A 503 "audit store unavailable: …" while
 * the database does not answer. In proxy/oidc mode the trail of everyone is an admin's; any other
 * signed-in user reads only their own entries, an anonymous caller none (401). Token mode: readable
 * by every caller, as the pages are (docs/SECURITY.md).
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, auditQuerySchema, async (q) => {
    let who = q.who;
    if (config().AUTH_MODE !== "token") {
      const p = await principalOf(req);
      if (p.source === "anonymous")
        throw new HttpError(
          401,
          "unauthorized",
          "anonymous: sign in to read the audit trail (your own entries; everyone's needs admin)",
        );
      if (!may(p, "audit-all")) who = p.name;
    }
    const store = auditStore();
    try {
      return {
        generatedAt: new Date().toISOString(),
        store: store.kind,
        entries: await store.list({ ...q, ...(who !== undefined ? { who } : {}) }),
      };
    } catch (e) {
      throw auditUnavailable(e, "the trail cannot be read; actions that change state are refused until it answers");
    }
  });
}
