import { redriveBodySchema } from "@/lib/api/dlq";
import { auditActor, audited } from "@/server/audit";
import { handleBody } from "@/server/http";
import { redriveDlq, redriveScope } from "@/server/observe/records/dlq";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/dlq/redrive` with `{ "uuids": [...] }` or `{ "filter": { handler, reason } }` and
 * `"dryRun"` (default true): answers `{ matched, redriven, skipped, preview, complete }`. A real
 * run publishes each matched DLQ record to its `topic_poisoned` (only `CONSUMER_TOPICS`) with the
 * same UUID and metadata minus the poison keys — the code `npm run dlq:replay` uses.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, redriveBodySchema, (b) => audited(req, "dlq.redrive", b, b.dryRun, () => redriveDlq(b, auditActor(req)), (r) => ({ matched: r.matched, changed: r.redriven }), (r) => redriveScope(b, r)));
}
