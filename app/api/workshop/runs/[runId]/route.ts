import { z } from "zod";
import { consumerRuntime } from "@/server/runtime";
import { handleParams, NotFoundError } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const params = z.object({
  runId: z.string().regex(/^[a-z0-9]{6,40}$/, "expected a run id as returned by POST …/runs"),
});

/** `GET /api/workshop/runs/{runId}` → `RunView`; 404 unknown (or pruned) run, 400 malformed id. */
export function GET(req: Request, ctx: { params: Promise<{ runId: string }> }): Promise<Response> {
  return handleParams(req, ctx.params, params, async (p) => {
    const v = await consumerRuntime().workshop.view(p.runId);
    if (!v) throw new NotFoundError(`no run ${p.runId} (runs are kept in memory: the 50 latest)`);
    return v;
  });
}
