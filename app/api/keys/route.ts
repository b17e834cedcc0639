import { keysQuerySchema } from "@/lib/api/keys";
import { browseKeys, observeContext } from "@/server/observe";
import { browseClient, handleQuery } from "@/server/http";
import { browseClients } from "@/server/observe/keys/budget";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/keys?prefix=&cursor=&count=`: one page of a handler prefix's keys, with a resumable
 * cursor. 429 + `Retry-After` when the caller has 2 requests in progress or the shared Redis budget is spent.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, keysQuerySchema, (q) =>
    browseClients().run(browseClient(req), () => browseKeys(observeContext(), q)),
  );
}
