import { recordsQuerySchema } from "@/lib/api/records";
import { handleQuery } from "@/server/http";
import { maskerFor } from "@/server/observe/records/payload-access";
import { getRecords } from "@/server/observe/routes/records";
import { withScanSlot } from "@/server/scan-slots";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/records?topic=&partition=&offset=`: one Kafka record; `GET /api/records?topic=&uuid=`:
 * the records whose `_watermill_message_uuid` is the UUID, newest first, within a bounded scan
 * (`complete: false` when a bound stopped it). Only `CONSUMER_TOPICS` and their DLQ topics (403
 * otherwise). Read without a consumer group: nothing is committed, no group rebalances. `MASK_RULES`
 * mask payloads and headers for a caller without `unmasked` (`masked` lists what).
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, recordsQuerySchema, async (q) =>
    q.uuid === undefined
      ? getRecords(q, await maskerFor(req))
      : withScanSlot(req, async () => getRecords(q, await maskerFor(req))),
  );
}
