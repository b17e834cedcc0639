import { touchedList } from "@/lib/api/audit";
import { forgetBodySchema } from "@/lib/api/key-actions";
import { audited } from "@/server/audit";
import { handleBody } from "@/server/http";
import { observeContext } from "@/server/observe";
import { auditFilterOf, forgetKeys } from "@/server/observe/routes/key-actions";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/keys/forget` with `{ service, handler, uuids? | state, olderThanMs?, leases?, previewId?, dryRun }`
 * → `{ matched, deleted, skipped, keys, previewId, … }`: deletes (`UNLINK`) a handler's keys so
 * their messages are processed again when replayed. A dry run (the default) lists what it matched
 * and keeps it under `previewId`; the real action sends that id and deletes exactly those keys,
 * each only while its value is the one the dry run read (`skipped`: the others). Without `uuids`
 * the state must be chosen (`any` for every key) and a real action needs the `previewId`. Only
 * keys inside `DEDUP_PREFIXES`, under the key browser's Redis budget; the audit keeps the keys deleted.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, forgetBodySchema, async (b) => {
    const r = await audited(
      req,
      "keys.forget",
      auditFilterOf(b),
      b.dryRun,
      () => forgetKeys(observeContext(), b),
      (r) => ({
        matched: r.body.matched,
        changed: r.body.deleted,
        ...(b.dryRun ? {} : { touched: { keys: touchedList(r.touched) } }),
      }),
      { service: b.service, handler: b.handler },
    );
    return r.body;
  });
}
