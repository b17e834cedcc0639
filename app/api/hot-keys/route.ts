import { hotKeysQuerySchema } from "@/lib/api/hot-keys";
import { getHotKeys } from "@/server/observe/routes/hot-keys";
import { observeContext } from "@/server/observe";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/hot-keys?service=&handler=`: the handler's most swallowed UUIDs (every process Prometheus scrapes; without it, this process's replicas). */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, hotKeysQuerySchema, (q) => getHotKeys(observeContext(), q));
}
