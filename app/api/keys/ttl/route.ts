import { ttlBodySchema } from "@/lib/api/key-actions";
import { audited } from "@/server/audit";
import { handleBody } from "@/server/http";
import { observeContext } from "@/server/observe";
import { setKeysTtl } from "@/server/observe/keys/actions";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/keys/ttl` with the selection of `/api/keys/forget` plus `ttlMs` → `{ matched, changed,
 * policyMs, beyondPolicy, … }`: sets the TTL of the matched keys. Longer than the handler's TTL
 * policy only with `allowBeyondPolicy: true` (400 otherwise), and the answer says so.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, ttlBodySchema, (b) => audited(req, "keys.ttl", b, b.dryRun, () => setKeysTtl(observeContext(), b), (r) => ({ matched: r.matched, changed: r.changed }), { service: b.service, handler: b.handler }));
}
