import { demoSourcesPatchSchema } from "@/lib/api/demo";
import { consumerRuntime } from "@/server/runtime";
import { audited } from "@/server/audit";
import { answer, handleBody } from "@/server/http";
import { config } from "@/server/config";
import { recordEvent } from "@/server/observe/events";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/sources` → `DemoSources`: the live demo's traffic and its four duplicate sources. */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().demo.getSources());
}

/** `PUT /api/demo/sources` with a `DemoSourcesPatch` → `DemoSources`; 400 invalid body, 401/403 by the access rule. */
export function PUT(req: Request): Promise<Response> {
  return handleBody(req, demoSourcesPatchSchema, (patch) =>
    audited(req, "demo.sources", patch, false, async () => {
      const sources = consumerRuntime().demo.setSources(patch);
      // A chart marker: a duplicate source switched on or off explains the ratio's step.
      const what = Object.entries(patch)
        .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
        .join("; ");
      recordEvent("source", `Demo source changed: ${what || "unchanged"}`, { service: config().SERVICE_NAME });
      return sources;
    }),
  );
}
