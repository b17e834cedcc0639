import type { z } from "zod";
import type { AuditAction } from "@/lib/api/audit";
import { audited, NO_COUNTS } from "@/server/audit";
import { config } from "@/server/config";
import type { DemoService } from "@/server/demo/demo";
import { answer, BadRequestError, handleBody } from "@/server/http";
import { consumerRuntime } from "@/server/runtime";

/**
 * The route handlers of one live-demo switch: `GET` answers its state; `PUT` applies a partial
 * patch and answers the new state (400 invalid body, 401/403 by the access rule). A PUT is audited
 * under `action` with the demo's service: that entry is also the chart marker that explains the
 * step in the ratio, latency or errors that follows. A switch the demo's mode cannot have (it
 * throws a `RangeError`, e.g. a Redis cut-off without Redis) is a 400 with the demo's reason.
 */
export function demoSwitchRoute<S extends z.ZodType, T>(
  action: AuditAction,
  schema: S,
  get: (demo: DemoService) => T,
  set: (demo: DemoService, patch: z.output<S>) => T,
) {
  const apply = async (patch: z.output<S>): Promise<T> => {
    try {
      return set(consumerRuntime().demo, patch);
    } catch (e) {
      if (e instanceof RangeError) throw new BadRequestError(e.message);
      throw e;
    }
  };
  return {
    GET: async (req: Request): Promise<Response> => answer(req, get(consumerRuntime().demo)),
    PUT: (req: Request): Promise<Response> =>
      handleBody(req, schema, (patch) =>
        audited(req, action, patch as object, false, () => apply(patch), NO_COUNTS, { service: config().SERVICE_NAME }),
      ),
  };
}
