import { overviewQuerySchema } from "@/lib/api/overview";
import { getOverview, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/overview?range=`: per handler ratio, p99, error rates, processed rate, keys, alerts; thresholds. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, overviewQuerySchema, (q) => getOverview(observeContext(), q.range));
}
