import { z } from "zod";
import { consumerRuntime } from "@/server/runtime";
import { audited, NO_COUNTS } from "@/server/audit";
import { config } from "@/server/config";
import { handleParams } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const params = z.object({
  name: z.string().regex(/^[a-z0-9-]{1,64}$/, "expected a scenario name such as retry-on-error"),
});

/**
 * `POST /api/workshop/scenarios/{name}/runs` → 202 `{ runId }`; 404 unknown scenario, 409 while it
 * runs (with the running `runId`), 400 malformed name, 401/403 by the access rule.
 */
export function POST(req: Request, ctx: { params: Promise<{ name: string }> }): Promise<Response> {
  return handleParams(
    req,
    ctx.params,
    params,
    (p) =>
      audited(
        req,
        "workshop.run",
        p,
        false,
        async () => ({ runId: consumerRuntime().workshop.start(p.name) }),
        NO_COUNTS,
        { service: config().SERVICE_NAME },
      ),
    { write: true, status: 202 },
  );
}
