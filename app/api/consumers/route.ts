import { consumersQuerySchema } from "@/lib/api/consumers";
import { handleQuery } from "@/server/http";
import { getConsumers } from "@/server/observe/routes/consumers";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/consumers?topic=&group=`: which replica of each consumer group holds which partitions
 * of the topic (default `DEMO_TOPIC`), lag per partition and processed rate per replica; one answer
 * per topic shared for 2 s, other services' members anonymised (server/observe/routes/consumers.ts).
 * 400 on a bad parameter or a group that does not consume the topic, 404 for another topic, 503 when
 * Kafka is not configured or down.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, consumersQuerySchema, (q) => getConsumers(q));
}
