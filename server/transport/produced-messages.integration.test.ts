/**
 * On real Kafka and Redis: what a handler returns survives a failed publish. The output publisher
 * (a `KafkaPublisher`) refuses the first publish of each produced message, as a broker hiccup
 * would; every output still lands on its topic exactly once, and the DLQ stays empty.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { newMessage, payloadText, type Message } from "@/server/dedup/message";
import type { Publisher } from "@/server/dedup/pubsub";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "@/server/dedup/redis-repository";
import { Router } from "@/server/dedup/router";
import { defaultStack } from "@/server/dedup/stack";
import { KafkaTransport } from "./index";
import { KafkaSubscriber } from "./kafka-subscriber";

const brokers = ["127.0.0.1:9092"];
const kafka = new KafkaTransport(brokers);
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", RECOMMENDED_IOREDIS_OPTIONS);
const topics: string[] = [];
const groups: string[] = [];
const keys: string[] = [];

afterAll(async () => {
  for (const k of keys) await redis.del(k);
  await redis.quit();
  await kafka.deleteGroups(groups);
  await kafka.deleteTopics(topics);
  await kafka.close();
});

/** `inner`, except that the first publish of each message uuid fails. */
function failingOnce(inner: Publisher): Publisher & { failed: Set<string> } {
  const failed = new Set<string>();
  return {
    failed,
    publish: async (topic: string, ...msgs: Message[]) => {
      const fresh = msgs.filter((m) => !failed.has(m.uuid));
      for (const m of fresh) failed.add(m.uuid);
      if (fresh.length > 0) throw new Error(`broker hiccup (injected) on ${fresh.length} message(s)`);
      await inner.publish(topic, ...msgs);
    },
    close: () => inner.close(),
  };
}

const until = async (cond: () => Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe("produced messages on Kafka", () => {
  it("20 inputs whose outputs' first publish fails: 20 of 20 outputs on the topic, each once; DLQ empty", async () => {
    const id = randomBytes(4).toString("hex");
    const [input, output, dlq] = [`prodtest.${id}`, `prodtest.${id}.out`, `prodtest.${id}.dlq`];
    topics.push(input, output, dlq);
    await kafka.createTopics([{ name: input, partitions: 2 }, { name: output, partitions: 1 }, { name: dlq, partitions: 1 }]);
    const service = `prod${id}`;
    const groupId = `prodtest-${id}`;
    groups.push(groupId);
    const out = failingOnce(kafka.newPublisher());
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "confirm",
      topic: input,
      subscriber: new KafkaSubscriber({ brokers, groupId, chunkSize: 10, nackDelayMs: 50 }),
      publisher: out,
      publishTopic: output,
      middleware: defaultStack({
        dlqPublisher: kafka.publisher,
        dlqTopic: dlq,
        retry: { maxRetries: 3, initialIntervalMs: 5, maxIntervalMs: 20 },
        dedup: { repository: new RedisRepository(redis), service, logger: () => undefined },
      }),
      handler: async (msg) => [newMessage(`out-${msg.uuid}`, `confirmed ${payloadText(msg)}`)],
    });
    const uuids = Array.from({ length: 20 }, (_, i) => `${id}-${i}`);
    keys.push(...uuids.map((u) => `${service}:dedup:confirm:${u}`));
    await kafka.publisher.publish(input, ...uuids.map((u, i) => newMessage(u, `order ${i}`)));
    void router.run();
    await router.running;
    try {
      await until(async () => (await kafka.readAll(output)).length >= 20);
      // A duplicate would land shortly after; give it the time of a few redeliveries.
      await new Promise((r) => setTimeout(r, 1_500));
      const landed = (await kafka.readAll(output)).map((d) => (d.ok ? d.uuid : "?"));
      expect(out.failed.size).toBe(20);
      expect(landed).toHaveLength(20);
      expect(new Set(landed)).toEqual(new Set(uuids.map((u) => `out-${u}`)));
      expect(await kafka.readAll(dlq)).toHaveLength(0);
    } finally {
      await router.close();
      await out.close();
    }
  }, 60_000);
});
