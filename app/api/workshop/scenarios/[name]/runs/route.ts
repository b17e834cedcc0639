import { z } from "zod";
import { runPaceSchema } from "@/lib/api/workshop";
import { consumerRuntime } from "@/server/runtime";
import { audited, NO_COUNTS } from "@/server/audit";
import { config } from "@/server/config";
import { handleParams } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const params = z.object({
  name: z.string().regex(/^[a-z0-9-]{1,64}$/, "expected a scenario name such as retry-on-error"),
  pace: runPaceSchema.default("fast"),
});

/**
 * `POST /api/workshop/scenarios/{name}/runs[?pace=fast|narrated]` → 202 `{ runId }`; 404 unknown
 * scenario, 409 while it runs (with the running `runId`), 400 malformed name or pace, 401/403 by the
 * access rule.
 */
export function POST(req: Request, ctx: { params: Promise<{ name: string }> }): Promise<Response> {
  return handleParams(
    req,
    // The pace rides in the query string (a run's POST has no body); validated with the name.
    ctx.params.then((p) => ({ ...p, pace: new URL(req.url).searchParams.get("pace") ?? undefined })),
    params,
    (p) =>
      audited(
        req,
        "workshop.run",
        p,
        false,
        async () => ({ runId: consumerRuntime().workshop.start(p.name, p.pace) }),
        NO_COUNTS,
        { service: config().SERVICE_NAME },
      ),
    { write: true, status: 202 },
  );
}
