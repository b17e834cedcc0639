import { touchedList, type AuditEntry } from "@/lib/api/audit";
import { redriveBodySchema } from "@/lib/api/dlq";
import { audited } from "@/server/audit";
import { dlqServices } from "@/server/auth/targets";
import { handleBody } from "@/server/http";
import { maskerFor } from "@/server/observe/records/payload-access";
import { redriveDlq, redriveScope, type RedriveTouched } from "@/server/observe/routes/dlq-redrive";

/** What the audit keeps of a re-drive: the records' UUIDs, their DLQ positions and where they were published (bounded, counted beyond). */
function touchedOf(t: RedriveTouched | undefined): AuditEntry["touched"] {
  if (!t) return {};
  return {
    uuids: touchedList(t.uuids),
    sourceOffsets: touchedList(t.sourceOffsets),
    destinationOffsets: touchedList(t.destinationOffsets),
  };
}

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `POST /api/dlq/redrive` with `{ "uuids": [...] }` or `{ "filter": { handler, reason } }` and
 * `"dryRun"` (default true) and `"mode"` (`same-uuid` / `new-uuid`; absent: new for a payload
 * conflict): answers `{ matched, redriven, skipped, preview, skippedPreview, ratePerSecond, complete }`.
 * A real run publishes each matched DLQ record to its `topic_poisoned` (only `CONSUMER_TOPICS`) with
 * its record key and metadata minus the poison keys, at most `DLQ_REDRIVE_RATE` per second — the
 * code `npm run dlq:replay` uses. The audit entry lists the UUIDs and the source and destination offsets.
 * The previews are masked (`MASK_RULES`) for a caller without `unmasked`; what is sent is not.
 * Needs operator of every service whose handlers consume the topic (of the one `filter.handler`
 * names); 403 otherwise, audited as refused.
 */
export function POST(req: Request): Promise<Response> {
  return handleBody(req, redriveBodySchema, (b) =>
    audited(
      req,
      "dlq.redrive",
      b,
      b.dryRun,
      async (p) => redriveDlq(b, p.name, await maskerFor(req)),
      (r) => ({ matched: r.matched, changed: r.redriven, touched: touchedOf(r.touched) }),
      (r) => redriveScope(b, r),
      { services: dlqServices(b.topic, b.filter?.handler) },
    ),
  );
}
