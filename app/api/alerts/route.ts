import { z } from "zod";
import { getAlerts, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/alerts`: every alert of lib/thresholds (spec §8's three and ours) with their instances (inactive | pending | firing). */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), () => getAlerts(observeContext()));
}
