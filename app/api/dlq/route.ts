import { dlqQuerySchema } from "@/lib/api/dlq";
import { handleQuery } from "@/server/http";
import { listDlq } from "@/server/observe/routes/dlq";
import { maskerFor } from "@/server/observe/records/payload-access";
import { withScanSlot } from "@/server/scan-slots";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/dlq?topic=&handler=&reason=&state=&cursor=&limit=`: a DLQ topic newest first (default
 * the first consumer topic's), with `reason_poisoned` (and its class), `handler_poisoned`,
 * `topic_poisoned`, `subscriber_poisoned`, the UUID, the poisoned time and the record's state
 * (`open`, `redriven`, `discarded`, with who, when and how); `state` filters (default `open`: what
 * still waits; `any` for every record); per-class counts of what was scanned; a cursor for older
 * records. Bounded like every record scan, and by the scans in flight (server/scan-slots.ts: 429). Header texts are masked (`MASK_RULES`) for a caller
 * without `unmasked`, and the handler filter matches what that caller sees.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, dlqQuerySchema, (q) => withScanSlot(req, async () => listDlq(q, await maskerFor(req))));
}
