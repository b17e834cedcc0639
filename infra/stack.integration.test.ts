import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import { createTopicsReady } from "@/server/transport/topics";

const id = randomBytes(6).toString("hex");

describe("the local stack (npm run stack:up)", () => {
  const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await redis.del(`stack-test:${id}`);
    redis.disconnect();
  });

  it("Redis: SET NX PX answers OK, then null while the key lives, then OK after it expired", async () => {
    const key = `stack-test:${id}`;
    expect(await redis.set(key, "1", "PX", 300, "NX")).toBe("OK");
    expect(await redis.set(key, "1", "PX", 300, "NX")).toBeNull();
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    await new Promise((r) => setTimeout(r, 400));
    expect(await redis.set(key, "1", "PX", 300, "NX")).toBe("OK");
  });

  it("Kafka: a message with Watermill's UUID header round-trips through the broker", async () => {
    const kafka = new Kafka({ clientId: `stack-test-${id}`, brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING });
    const topic = `stack-test-${id}`;
    const admin = kafka.admin();
    await admin.connect();
    await createTopicsReady(admin, [{ name: topic, partitions: 1 }]);
    const producer = kafka.producer();
    const consumer = kafka.consumer({ groupId: `stack-test-${id}` });
    try {
      await producer.connect();
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got = new Promise<{ value: string; uuid: string }>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) =>
            resolve({
              value: message.value?.toString() ?? "",
              uuid: message.headers?._watermill_message_uuid?.toString() ?? "",
            }),
        });
      });
      await producer.send({ topic, messages: [{ value: `hello ${id}`, headers: { _watermill_message_uuid: id } }] });
      const m = await got;
      expect(m).toEqual({ value: `hello ${id}`, uuid: id });
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => {});
      await admin.disconnect();
    }
  });

  it("Kafka: the demo topics exist with their partitions", async () => {
    const kafka = new Kafka({ clientId: `stack-test-${id}`, brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const md = await admin.fetchTopicMetadata({ topics: ["demo.events", "demo.events.dlq"] });
      const parts = Object.fromEntries(md.topics.map((t) => [t.name, t.partitions.length]));
      expect(parts["demo.events"]).toBe(6);
      expect(parts["demo.events.dlq"]).toBe(1);
    } finally {
      await admin.disconnect();
    }
  });
});
