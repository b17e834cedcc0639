import { z } from "zod";
import { consumerRuntime } from "@/server/consumer/runtime";
import { fail, guard, json, parse } from "@/server/consumer/http";
import type { ScenarioBusyError, UnknownScenarioError } from "@/server/consumer/workshop";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const params = z.object({ name: z.string().regex(/^[a-z0-9-]{1,64}$/, "expected a scenario name such as retry-on-error") });

/**
 * `POST /api/workshop/scenarios/{name}/runs` → 202 `{ runId }`; 404 unknown scenario, 409 while it
 * runs (with the running `runId`), 400 malformed name, 401/403 by the access rule.
 */
export async function POST(req: Request, ctx: { params: Promise<{ name: string }> }): Promise<Response> {
  const denied = guard(req);
  if (denied) return denied;
  const p = parse(params, await ctx.params, "name");
  if (!p.ok) return p.response;
  try {
    const runId = consumerRuntime().workshop.start(p.value.name);
    return json({ runId }, 202);
  } catch (e) {
    // By name, not instanceof: the runner may come from another bundle's copy of the module
    // (instrumentation.ts creates it; Next bundles route handlers separately).
    const err = e as Partial<UnknownScenarioError & ScenarioBusyError>;
    if (err.name === "UnknownScenarioError") return fail(404, "not_found", String(err.message));
    if (err.name === "ScenarioBusyError") return fail(409, "conflict", String(err.message), { runId: err.runId });
    return fail(500, "internal", e instanceof Error ? e.message : String(e));
  }
}
