import { seriesQuerySchema } from "@/lib/api-types";
import { getSeries, handleQuery, observeContext } from "@/server/observe";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/series?metric=&service=&handler=&range=&step=`: one named series over a range. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, seriesQuerySchema, (q) => getSeries(observeContext(), q));
}
