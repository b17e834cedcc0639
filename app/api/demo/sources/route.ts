import { demoSourcesPatchSchema } from "@/lib/workshop-types";
import { consumerRuntime } from "@/server/consumer/runtime";
import { guard, json, parse, readJson } from "@/server/consumer/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/sources` → `DemoSources`: the live demo's traffic and its four duplicate sources. */
export async function GET(): Promise<Response> {
  return json(consumerRuntime().demo.getSources());
}

/** `PUT /api/demo/sources` with a `DemoSourcesPatch` → `DemoSources`; 400 invalid body, 401/403 by the access rule. */
export async function PUT(req: Request): Promise<Response> {
  const denied = guard(req);
  if (denied) return denied;
  const body = await readJson(req);
  if (!body.ok) return body.response;
  const p = parse(demoSourcesPatchSchema, body.value, "body");
  if (!p.ok) return p.response;
  return json(consumerRuntime().demo.setSources(p.value));
}
