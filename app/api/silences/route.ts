import { z } from "zod";
import { silenceCreateSchema } from "@/lib/api/silences";
import { createSilence, getSilences } from "@/server/observe/alertmanager";
import { handleBody, handleQuery } from "@/server/http";
import { recordSilenceWrite, silenceScope } from "@/server/silence-audit";
import { audited, NO_COUNTS } from "@/server/audit";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/silences` → `SilencesResponse`: Alertmanager's silences (every state), or why not. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), () => getSilences());
}

/**
 * `POST /api/silences` with a `SilenceCreate` → 201 `{ silence }`: mutes `{alertname, service[,
 * handler]}` from now for `durationMinutes`. 400 invalid body, 401/403 by the access rule, 503
 * without Alertmanager.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(
    req,
    silenceCreateSchema,
    (body) =>
      audited(
        req,
        "silence.create",
        body,
        false,
        async () => {
          const r = await createSilence(body);
          recordSilenceWrite(req, "silence.create", r.silence);
          return r;
        },
        NO_COUNTS,
        (r) => silenceScope(r.silence),
      ),
    201,
  );
}
