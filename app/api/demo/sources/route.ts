import { demoSourcesPatchSchema } from "@/lib/workshop-types";
import { consumerRuntime } from "@/server/runtime";
import { audited } from "@/server/audit";
import { answer, handleBody } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/sources` → `DemoSources`: the live demo's traffic and its four duplicate sources. */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().demo.getSources());
}

/** `PUT /api/demo/sources` with a `DemoSourcesPatch` → `DemoSources`; 400 invalid body, 401/403 by the access rule. */
export function PUT(req: Request): Promise<Response> {
  return handleBody(req, demoSourcesPatchSchema, (patch) => audited(req, "demo.sources", patch, false, async () => consumerRuntime().demo.setSources(patch)));
}
