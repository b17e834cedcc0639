import { demoSourcesPatchSchema } from "@/lib/api/demo";
import { consumerRuntime } from "@/server/runtime";
import { audited, NO_COUNTS } from "@/server/audit";
import { answer, handleBody } from "@/server/http";
import { config } from "@/server/config";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/sources` → `DemoSources`: the live demo's traffic and its four duplicate sources. */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().demo.getSources());
}

/** `PUT /api/demo/sources` with a `DemoSourcesPatch` → `DemoSources`; 400 invalid body, 401/403 by the access rule. */
export function PUT(req: Request): Promise<Response> {
  return handleBody(req, demoSourcesPatchSchema, (patch) =>
    // Its audit entry is also the chart marker: a duplicate source switched on or off explains the ratio's step.
    audited(req, "demo.sources", patch, false, async () => consumerRuntime().demo.setSources(patch), NO_COUNTS, { service: config().SERVICE_NAME }),
  );
}
