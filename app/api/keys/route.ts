import { keysQuerySchema } from "@/lib/api-types";
import { browseKeys, handleQuery, observeContext } from "@/server/observe";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/keys?prefix=&cursor=&count=`: one page of a handler prefix's keys, with a resumable cursor. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, keysQuerySchema, (q) => browseKeys(observeContext(), q));
}
