import { touchedList } from "@/lib/api/audit";
import { discardBodySchema } from "@/lib/api/dlq";
import { audited } from "@/server/audit";
import { dlqServices } from "@/server/auth/targets";
import { config } from "@/server/config";
import { handleBody } from "@/server/http";
import { discardDlq } from "@/server/observe/routes/dlq-discard";
import { maskerFor } from "@/server/observe/records/payload-access";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/dlq/discard` with `{ "positions": [{ partition, offset }] }` or `{ "uuids": [...] }`,
 * `"why"` (required) and `"dryRun"` (default true): marks the open DLQ records named `discarded`
 * (they stay in the topic; they leave the backlog and the page's default view). Answers
 * `{ matched, discarded, notOpen, notFound, preview, complete }`; audited as `dlq.discard` with
 * the positions and UUIDs it marked. Needs operator of every service whose handlers consume the
 * topic (403 otherwise, audited as refused). The preview is masked (`MASK_RULES`) for a caller without `unmasked`.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, discardBodySchema, (b) =>
    audited(
      req,
      "dlq.discard",
      b,
      b.dryRun,
      async (p) => discardDlq(b, p.name, await maskerFor(req)),
      (r) => ({
        matched: r.matched,
        changed: r.discarded,
        touched: { sourceOffsets: touchedList(r.positions), uuids: touchedList(r.uuids) },
      }),
      { service: config().SERVICE_NAME },
      { services: dlqServices(b.topic) },
    ),
  );
}
