import { z } from "zod";
import { getCapacity, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/capacity`: projected keys and memory per handler next to the measured count. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), () => getCapacity(observeContext()));
}
