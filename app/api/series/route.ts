import { seriesQuerySchema } from "@/lib/api/series";
import { getSeries, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";
import { normalizeStep } from "@/server/observe/shared/series-step";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/series?metric=&service=&handler=&range=&step=`: one named series over a range. `step`
 * is raised to the next allowed step (server/observe/shared/series-step.ts), so it hits the shared cache.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, seriesQuerySchema, (q) =>
    getSeries(observeContext(), { ...q, step: normalizeStep(q.range, q.step) }),
  );
}
