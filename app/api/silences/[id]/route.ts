import { silenceIdSchema } from "@/lib/api/silences";
import { expireSilence } from "@/server/observe/routes/silences";
import { handleParams } from "@/server/http";
import { auditedSilenceWrite, silenceServices } from "@/server/silence-audit";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `DELETE /api/silences/{id}` → `{ silence }` (now expired): expires the silence, as `amtool silence
 * expire` does. 400 not a silence id, 401/403 by the access rule or the role (operator of the
 * silence's `service`; admin for one that names none), 404 unknown silence, 503 without Alertmanager.
 */
export function DELETE(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<Response> {
  return handleParams(
    req,
    ctx.params,
    silenceIdSchema,
    async ({ id }) =>
      auditedSilenceWrite(req, "silence.expire", { id }, await silenceServices(id), () => expireSilence(id)),
    { write: true },
  );
}
