import { demoFaultsPatchSchema } from "@/lib/workshop-types";
import { consumerRuntime } from "@/server/consumer/runtime";
import { fail, guard, json, parse, readJson } from "@/server/consumer/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/faults` → `DemoFaults`: added latency, error rate, Redis cut-off of the demo's dedup store. */
export async function GET(): Promise<Response> {
  return json(consumerRuntime().demo.getFaults());
}

/** `PUT /api/demo/faults` with a `DemoFaultsPatch` → `DemoFaults`; 400 invalid body (or a Redis cut-off in embedded mode), 401/403. */
export async function PUT(req: Request): Promise<Response> {
  const denied = guard(req);
  if (denied) return denied;
  const body = await readJson(req);
  if (!body.ok) return body.response;
  const p = parse(demoFaultsPatchSchema, body.value, "body");
  if (!p.ok) return p.response;
  try {
    return json(consumerRuntime().demo.setFaults(p.value));
  } catch (e) {
    if (e instanceof RangeError) return fail(400, "bad_request", e.message);
    throw e;
  }
}
