import { handlerSelfParamsSchema } from "@/lib/api/handlers";
import { handleParams } from "@/server/http";
import { observeContext } from "@/server/observe";
import { getHandlerSelf } from "@/server/observe/routes/handlers-self";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/handlers/{service}/{handler}`: the handler as it declares itself (its
 * `dedup_handler_info` in Prometheus, else this process's registration), the lint of that, its TTL
 * class and window (inferred where undeclared, and said so), lease, and its consumer group on Kafka
 * by the declared group. 400 on a name that is not a label value.
 */
export function GET(req: Request, ctx: { params: Promise<{ service: string; handler: string }> }): Promise<Response> {
  return handleParams(req, ctx.params, handlerSelfParamsSchema, ({ service, handler }) =>
    getHandlerSelf(observeContext(), service, handler),
  );
}
