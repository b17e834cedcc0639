/**
 * On real Kafka and Redis: a record without a UUID read twice — the second time by a consumer that
 * starts with no committed offset, as after a restart before the commit or a rebalance that re-reads
 * the uncommitted tail — has ONE copy in the DLQ, keyed by its source position.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "@/server/dedup/redis-repository";
import { Router } from "@/server/dedup/router";
import { dlqCopyKey, OFFSET_POISONED_KEY, PARTITION_POISONED_KEY, TOPIC_POISONED_KEY } from "@/names/dedup";
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

const until = async (cond: () => Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 200));
  }
};

/** Reads `topic` with a fresh group until `n` unreadable records were seen; the DLQ publish goes through `repository`. */
async function readOnce(topic: string, dlq: string, repository: RedisRepository | undefined, seen: { n: number }): Promise<void> {
  const groupId = `dlqonce-${randomBytes(3).toString("hex")}`;
  groups.push(groupId);
  const before = seen.n;
  let reported = 0;
  const router = new Router({ onError: () => undefined });
  router.addHandler({
    name: "h",
    topic,
    subscriber: new KafkaSubscriber({ brokers: [BROKER], groupId, dlq: { publisher: kafka.publisher, topic: dlq, repository }, onUnreadable: () => void reported++, claimsUnreadable: () => (seen.n++, true) }),
    handler: async () => undefined,
  });
  void router.run();
  await router.running;
  try {
    await until(async () => seen.n > before);
    // The read owns the record now; give its DLQ publish and report time to land before the stop.
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    await router.close();
  }
  (seen as { reported?: number[] }).reported = [...((seen as { reported?: number[] }).reported ?? []), reported];
}

describe("one DLQ copy per record without a UUID", () => {
  it("read again before its commit, the record's DLQ copy is not published twice; its position is in the copy's headers", async () => {
    const id = randomBytes(4).toString("hex");
    const [topic, dlq] = [`dlqonce.${id}`, `dlqonce.${id}.dlq`];
    topics.push(topic, dlq);
    await kafka.createTopics([{ name: topic, partitions: 1 }, { name: dlq, partitions: 1 }]);
    await kafka.produceRaw(topic, { headers: { "Event-Type": "review.created" }, value: Buffer.from('{"no":"uuid"}') });
    keys.push(dlqCopyKey(topic, 0, "0"));
    const repository = new RedisRepository(redis);
    const seen: { n: number; reported?: number[] } = { n: 0 };
    await readOnce(topic, dlq, repository, seen);
    await readOnce(topic, dlq, repository, seen);
    const copies = await kafka.readAll(dlq);
    expect(seen.n).toBe(2);
    expect(copies).toHaveLength(1);
    expect(copies[0]!.metadata[TOPIC_POISONED_KEY]).toBe(topic);
    expect(copies[0]!.metadata[PARTITION_POISONED_KEY]).toBe("0");
    expect(copies[0]!.metadata[OFFSET_POISONED_KEY]).toBe("0");
    // Reported (counted as a marshal error and a DLQ message) once, by the read that sent it.
    expect(seen.reported).toEqual([1, 0]);
  }, 60_000);
});
