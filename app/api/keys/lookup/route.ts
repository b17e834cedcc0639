import { keyLookupQuerySchema } from "@/lib/api-types";
import { handleQuery, lookupKey, observeContext } from "@/server/observe";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/keys/lookup?uuid=`: one message UUID looked up under every known handler prefix. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, keyLookupQuerySchema, (q) => lookupKey(observeContext(), q));
}
