import { silenceIdSchema } from "@/lib/api/silences";
import { expireSilence } from "@/server/observe/alertmanager";
import { handleParams } from "@/server/http";
import { auditedSilenceWrite } from "@/server/silence-audit";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `DELETE /api/silences/{id}` → `{ silence }` (now expired): expires the silence, as `amtool silence
 * expire` does. 400 not a silence id, 401/403 by the access rule, 404 unknown silence, 503 without
 * Alertmanager.
 */
export function DELETE(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  return handleParams(req, ctx.params, silenceIdSchema, ({ id }) => auditedSilenceWrite(req, "silence.expire", { id }, () => expireSilence(id)), { write: true });
}
