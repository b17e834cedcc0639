/**
 * On real Kafka and Redis, with records written by a client that is not ours (`kcat`): two records
 * with one `_watermill_message_uuid` and different payloads. The first is processed; the second is
 * a payload conflict — counted for that handler and sent to the DLQ with the conflict reason, not
 * swallowed as a duplicate. A third record with the first payload is an ordinary repeat.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { payloadText } from "@/server/dedup/message";
import { dedupMetrics } from "@/server/dedup/metrics";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "@/server/dedup/redis-repository";
import { Router } from "@/server/dedup/router";
import { defaultStack } from "@/server/dedup/stack";
import { POISON_REASON_CLASS, REASON_POISONED_KEY, TOPIC_POISONED_KEY, WATERMILL_UUID_HEADER } from "@/names/dedup";
import { KafkaTransport } from "./index";
import { KafkaSubscriber } from "./kafka-subscriber";

const BROKER = "127.0.0.1:9092";
const kafka = new KafkaTransport([BROKER]);
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

/** One record produced by kcat with the Watermill UUID header and `payload` as its value. */
function kcat(topic: string, uuid: string, payload: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = execFile("kcat", ["-P", "-b", BROKER, "-t", topic, "-H", `${WATERMILL_UUID_HEADER}=${uuid}`], { timeout: 15_000 }, (e) => (e ? reject(e) : resolve()));
    p.stdin!.end(payload);
  });
}

const until = async (cond: () => Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe("payload conflict on Kafka (records by kcat)", () => {
  it("a reused UUID with another payload moves the handler's conflict counter and lands in the DLQ with the conflict reason", async () => {
    const id = randomBytes(4).toString("hex");
    const [topic, dlq] = [`conflicttest.${id}`, `conflicttest.${id}.dlq`];
    topics.push(topic, dlq);
    await kafka.createTopics([{ name: topic, partitions: 1 }, { name: dlq, partitions: 1 }]);
    const service = `conflict${id}`;
    const groupId = `conflicttest-${id}`;
    groups.push(groupId);
    const uuid = `01REUSED${id.toUpperCase()}`;
    keys.push(`${service}:dedup:charge:${uuid}`);
    const registry = new Registry();
    const ran: string[] = [];
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "charge",
      topic,
      subscriber: new KafkaSubscriber({ brokers: [BROKER], groupId, chunkSize: 10, nackDelayMs: 50 }),
      middleware: defaultStack({ dlqPublisher: kafka.publisher, dlqTopic: dlq, retry: { maxRetries: 0 }, dedup: { repository: new RedisRepository(redis), service, registry, logger: () => undefined } }),
      handler: async (msg) => void ran.push(payloadText(msg)),
    });
    const conflicts = async () => (await dedupMetrics(registry).payloadConflicts.get()).values.find((v) => v.labels.handler === "charge")?.value;
    expect(await conflicts()).toBe(0);
    void router.run();
    await router.running;
    try {
      await kcat(topic, uuid, '{"amount":10}');
      await kcat(topic, uuid, '{"amount":99}');
      await kcat(topic, uuid, '{"amount":10}');
      await until(async () => (await conflicts()) === 1 && (await kafka.readAll(dlq)).length === 1);
      const [copy] = await kafka.readAll(dlq);
      expect(copy?.ok && copy.uuid).toBe(uuid);
      expect(copy?.ok && copy.payload.toString()).toBe('{"amount":99}');
      expect(copy?.metadata[REASON_POISONED_KEY]).toMatch(/^payload conflict on /);
      expect(copy?.metadata[TOPIC_POISONED_KEY]).toBe(topic);
      const poisoned = (await dedupMetrics(registry).poisoned.get()).values.find((v) => v.labels.reason_poisoned === POISON_REASON_CLASS.payloadConflict);
      expect(poisoned?.value).toBe(1);
      // The first record ran; the third (same payload) was an ordinary repeat.
      await until(async () => (await dedupMetrics(registry).deduplicated.get()).values.some((v) => v.value === 1));
      expect(ran).toEqual(['{"amount":10}']);
    } finally {
      await router.close();
    }
  }, 60_000);
});
