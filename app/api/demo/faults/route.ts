import { demoFaultsPatchSchema } from "@/lib/api/demo";
import { consumerRuntime } from "@/server/runtime";
import { audited, NO_COUNTS } from "@/server/audit";
import { answer, BadRequestError, handleBody } from "@/server/http";
import { config } from "@/server/config";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/demo/faults` → `DemoFaults`: added latency, error rate, Redis cut-off of the demo's dedup store. */
export async function GET(req: Request): Promise<Response> {
  return answer(req, consumerRuntime().demo.getFaults());
}

/** `PUT /api/demo/faults` with a `DemoFaultsPatch` → `DemoFaults`; 400 invalid body (or a Redis cut-off in embedded mode), 401/403. */
export function PUT(req: Request): Promise<Response> {
  return handleBody(req, demoFaultsPatchSchema, (patch) =>
    // Its audit entry is also the chart marker of the demo service: the step in latency or errors that follows has this cause.
    audited(
      req,
      "demo.faults",
      patch,
      false,
      async () => {
        try {
          return consumerRuntime().demo.setFaults(patch);
        } catch (e) {
          // The demo refuses a fault its mode cannot have (a Redis cut-off without Redis).
          if (e instanceof RangeError) throw new BadRequestError(e.message);
          throw e;
        }
      },
      NO_COUNTS,
      { service: config().SERVICE_NAME },
    ),
  );
}
