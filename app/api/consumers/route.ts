import { consumersQuerySchema } from "@/lib/consumer-types";
import { handleQuery } from "@/server/observe/http";
import { getConsumers } from "@/server/observe/consumer-group";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /api/consumers?topic=&group=`: which replica of each consumer group holds which partitions
 * of the topic (default `demo.events`), lag per partition and processed rate per replica.
 * 400 on a bad parameter, 404 for an unknown topic or group, 503 when Kafka is not configured or down.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, consumersQuerySchema, (q) => getConsumers(q));
}
