import { z } from "zod";
import { getLint, observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/lint`: lintHandler findings of the declared handlers and the TTL policy of every handler in Redis. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, z.object({}), () => getLint(observeContext()));
}
