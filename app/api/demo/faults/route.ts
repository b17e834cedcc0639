import { demoFaultsPatchSchema } from "@/lib/api/demo";
import { consumerRuntime } from "@/server/runtime";
import { audited } from "@/server/audit";
import { answer, BadRequestError, handleBody } from "@/server/http";
import { config } from "@/server/config";
import { recordEvent } from "@/server/observe/events";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/faults` → `DemoFaults`: added latency, error rate, Redis cut-off of the demo's dedup store. */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().demo.getFaults());
}

/** `PUT /api/demo/faults` with a `DemoFaultsPatch` → `DemoFaults`; 400 invalid body (or a Redis cut-off in embedded mode), 401/403. */
export function PUT(req: Request): Promise<Response> {
  return handleBody(req, demoFaultsPatchSchema, (patch) =>
    audited(req, "demo.faults", patch, false, async () => {
      try {
        const faults = consumerRuntime().demo.setFaults(patch);
        // A chart marker: the step in latency or errors that follows has this cause.
        const what = Object.entries(patch).map(([k, v]) => `${k}=${v}`).join(", ");
        recordEvent("fault", `Demo store fault set: ${what || "unchanged"}`, { service: config().SERVICE_NAME });
        return faults;
      } catch (e) {
        // The demo refuses a fault its mode cannot have (a Redis cut-off without Redis).
        if (e instanceof RangeError) throw new BadRequestError(e.message);
        throw e;
      }
    }),
  );
}
