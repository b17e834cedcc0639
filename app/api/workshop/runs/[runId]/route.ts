import { z } from "zod";
import { consumerRuntime } from "@/server/consumer/runtime";
import { fail, json, parse } from "@/server/consumer/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const params = z.object({ runId: z.string().regex(/^[a-z0-9]{6,40}$/, "expected a run id as returned by POST …/runs") });

/** `GET /api/workshop/runs/{runId}` → `RunView`; 404 unknown (or pruned) run, 400 malformed id. */
export async function GET(_req: Request, ctx: { params: Promise<{ runId: string }> }): Promise<Response> {
  const p = parse(params, await ctx.params, "runId");
  if (!p.ok) return p.response;
  const v = await consumerRuntime().workshop.view(p.value.runId);
  return v ? json(v) : fail(404, "not_found", `no run ${p.value.runId} (runs are kept in memory: the 50 latest)`);
}
