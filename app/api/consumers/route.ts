import { consumersQuerySchema } from "@/lib/consumer-types";
import { config } from "@/server/config";
import { SharedCache } from "@/server/observe/cache";
import { handleQuery, NotFoundError } from "@/server/http";
import { getConsumers } from "@/server/observe/consumer-group";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

type G = typeof globalThis & { __dedupHealthConsumersAnswers?: WeakMap<object, SharedCache> };

/**
 * Answers shared by every viewer of a topic/group for 2 s (each costs several Kafka admin calls),
 * one cache per configuration: an answer got under one `KAFKA_BROKERS` (e.g. "not configured") is
 * never served under another.
 */
function answers(): SharedCache {
  const g = globalThis as G;
  g.__dedupHealthConsumersAnswers ??= new WeakMap();
  const c = config();
  let cache = g.__dedupHealthConsumersAnswers.get(c);
  if (!cache) g.__dedupHealthConsumersAnswers.set(c, (cache = new SharedCache({ ttlMs: 2000, errorTtlMs: 1000 })));
  return cache;
}

/**
 * `GET /api/consumers?topic=&group=`: which replica of each consumer group holds which partitions
 * of the topic (default `demo.events`), lag per partition and processed rate per replica. Only the
 * topics of `CONSUMER_TOPICS` (default the demo topic) and the groups consuming them are described.
 * 400 on a bad parameter, 404 for another topic or an unknown group, 503 when Kafka is not configured or down.
 */
export function GET(req: Request): Promise<Response> {
  return handleQuery(req, consumersQuerySchema, (q) => {
    if (!config().CONSUMER_TOPICS.includes(q.topic)) throw new NotFoundError(`topic ${q.topic} is not one of CONSUMER_TOPICS (${config().CONSUMER_TOPICS.length} configured)`);
    return answers().get(`${q.topic}\u0000${q.group ?? ""}`, () => getConsumers(q));
  });
}
