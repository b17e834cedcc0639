import { eventsQuerySchema } from "@/lib/api/events";
import { observeContext } from "@/server/observe";
import { getEvents } from "@/server/observe/routes/events";
import { auditMarkers } from "@/server/audit/markers";
import { handleQuery } from "@/server/http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** `GET /api/events?range=&service=&handler=` → `EventsResponse`: the chart markers of the range (newest 50), recorded actions from the audit trail. */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, eventsQuerySchema, (q) => getEvents(observeContext(), q, Date.now(), auditMarkers));
}
