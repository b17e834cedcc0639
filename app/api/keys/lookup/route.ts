import { keyLookupQuerySchema } from "@/lib/api/keys";
import { lookupKey, observeContext } from "@/server/observe";
import { browseClient, handleQuery } from "@/server/http";
import { browseClients } from "@/server/observe/keys/budget";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/keys/lookup?uuid=&prefix=`: one message UUID looked up under the known handler
 * prefixes (capped). 429 + `Retry-After` like `/api/keys`, with which it shares the limits.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, keyLookupQuerySchema, (q) =>
    browseClients().run(browseClient(req), () => lookupKey(observeContext(), q)),
  );
}
