import { touchedList } from "@/lib/api/audit";
import { ttlBodySchema } from "@/lib/api/key-actions";
import { audited } from "@/server/audit";
import { handleBody } from "@/server/http";
import { observeContext } from "@/server/observe";
import { auditFilterOf, setKeysTtl } from "@/server/observe/routes/key-actions";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/keys/ttl` with the selection of `/api/keys/forget` plus `ttlMs` → `{ matched, changed,
 * skipped, policyMs, beyondPolicy, … }`: sets the TTL of the matched keys, bound to the dry run's
 * `previewId` as a forget is. Longer than the handler's TTL policy only with
 * `allowBeyondPolicy: true` (400 otherwise), and the answer says so.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, ttlBodySchema, async (b) => {
    const r = await audited(
      req,
      "keys.ttl",
      auditFilterOf(b),
      b.dryRun,
      () => setKeysTtl(observeContext(), b),
      (r) => ({
        matched: r.body.matched,
        changed: r.body.changed,
        ...(b.dryRun ? {} : { touched: { keys: touchedList(r.touched) } }),
      }),
      { service: b.service, handler: b.handler },
    );
    return r.body;
  });
}
