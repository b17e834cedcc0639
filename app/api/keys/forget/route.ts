import { forgetBodySchema } from "@/lib/api/key-actions";
import { audited } from "@/server/audit";
import { handleBody } from "@/server/http";
import { observeContext } from "@/server/observe";
import { forgetKeys } from "@/server/observe/keys/actions";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/keys/forget` with `{ service, handler, uuids?, state?, olderThanMs?, dryRun }` →
 * `{ matched, deleted, complete }`: deletes (`UNLINK`) a handler's keys — the UUIDs given, or every
 * key by state and idle time — so their messages are processed again when replayed. A dry run
 * (the default) only counts. Only keys inside `DEDUP_PREFIXES`, under the key browser's Redis budget.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, forgetBodySchema, (b) => audited(req, "keys.forget", b, b.dryRun, () => forgetKeys(observeContext(), b), (r) => ({ matched: r.matched, changed: r.deleted }), { service: b.service, handler: b.handler }));
}
