import { z } from "zod";
import { silenceCreateSchema } from "@/lib/api/silences";
import { createSilence, getSilences } from "@/server/observe/routes/silences";
import { handleBody, handleQuery } from "@/server/http";
import { auditedSilenceWrite, silenceCreator } from "@/server/silence-audit";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/silences` → `SilencesResponse`: Alertmanager's silences (every state), or why not. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), () => getSilences());
}

/**
 * `POST /api/silences` with a `SilenceCreate` → 201 `{ silence }`: mutes `{alertname, service[,
 * handler]}` from now for `durationMinutes`. 400 invalid body, 401/403 by the access rule or the
 * role (operator of `service`), 503 without Alertmanager. In proxy/oidc mode `createdBy` is the user.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(
    req,
    silenceCreateSchema,
    (body) =>
      auditedSilenceWrite(req, "silence.create", body, [body.service], (p) =>
        createSilence({ ...body, createdBy: silenceCreator(p, body.createdBy) }),
      ),
    201,
  );
}
