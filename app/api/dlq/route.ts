import { dlqQuerySchema } from "@/lib/api/dlq";
import { handleQuery } from "@/server/http";
import { listDlq } from "@/server/observe/records/dlq";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/dlq?topic=&handler=&reason=&cursor=&limit=`: a DLQ topic newest first (default the
 * first consumer topic's), with `reason_poisoned` (and its class), `handler_poisoned`,
 * `topic_poisoned`, `subscriber_poisoned`, the UUID and the poisoned time; per-class counts of what
 * was scanned; a cursor for older records. Bounded like every record scan.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, dlqQuerySchema, (q) => listDlq(q));
}
