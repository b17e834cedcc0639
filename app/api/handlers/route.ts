import { handlersQuerySchema } from "@/lib/api/handlers";
import { getHandlers, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/handlers[?refresh=1][&mode=estimate]`: per-handler key counts, TTLs, sizes and scan progress. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, handlersQuerySchema, (q) => getHandlers(observeContext(), q));
}
