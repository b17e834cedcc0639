/**
 * The route builder of `GET /api/consumers` (lib/api/consumers.ts): which replica of each consumer
 * group holds which partitions of a topic, from Kafka's admin API (`kafka/consumer-group.ts`), one
 * answer per topic shared by every viewer for 2 s, members of other services anonymised.
 */
import type { z } from "zod";
import type { consumersQuerySchema, ConsumersResponse } from "@/lib/api/consumers";
import { config } from "@/server/config";
import { BadRequestError, NotFoundError, UpstreamUnavailableError } from "../core/errors";
import { SharedCache } from "../core/cache";
import { declaredHandlers } from "../core/handler-registry";
import { consumerGroupDescriber } from "../kafka/consumer-group";
import { consumersForViewer } from "../shared/consumer-privacy";

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

/** Every group of `topic` as Kafka describes it for this process. @throws UpstreamUnavailableError when Kafka is not configured or down. */
async function describeTopic(topic: string): Promise<ConsumersResponse> {
  const d = consumerGroupDescriber();
  if (!d)
    throw new UpstreamUnavailableError(
      "kafka: not configured (set KAFKA_BROKERS; the embedded demo has no consumer group)",
    );
  await d.ready();
  return d.describer.describe({ topic });
}

/**
 * Builds `GET /api/consumers?topic=&group=` (topic default `DEMO_TOPIC`). Only the topics of
 * `CONSUMER_TOPICS` or declared by a handler of the fleet (`dedup_handler_info`'s `topic`) and the
 * groups consuming them are described: one answer per topic, shared for 2 s, whatever `group` asks
 * for (a group is picked out of it, so no parameter value costs Kafka admin calls of its own).
 * Other services' members are anonymised (`shared/consumer-privacy.ts`). 400 on a group that does
 * not consume the topic, 404 for another topic, 503 when Kafka is not configured or down.
 */
export async function getConsumers(query: z.infer<typeof consumersQuerySchema>): Promise<ConsumersResponse> {
  const c = config();
  const q = { ...query, topic: query.topic ?? c.DEMO_TOPIC };
  // A topic a handler of the fleet declares consuming (its dedup_handler_info, last read) is described too: with DEMO=off the demo topic is no one's.
  const declared = declaredHandlers().some((d) => d.topic === q.topic);
  if (!c.CONSUMER_TOPICS.includes(q.topic) && !declared)
    throw new NotFoundError(
      `topic ${q.topic} is neither one of CONSUMER_TOPICS (${c.CONSUMER_TOPICS.length} configured) nor declared by a handler's dedup_handler_info`,
    );
  const all = consumersForViewer(
    await answers().get(q.topic, () => describeTopic(q.topic)),
    c.SERVICE_NAME,
    c.CONSUMER_DETAILS,
  );
  if (q.group === undefined) return all;
  const groups = all.groups.filter((g) => g.groupId === q.group);
  if (groups.length === 0)
    throw new BadRequestError(
      `group: not a consumer group of ${q.topic} (the groups consuming it are listed without a group parameter)`,
    );
  return { ...all, groups };
}
