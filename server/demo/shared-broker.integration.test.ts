import { randomBytes } from "node:crypto";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPE_KEY } from "@/names/dedup";
import { parseConfig, type AppConfig } from "@/server/config";
import { dedupMetrics, RedisRepository } from "@/server/dedup";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { demoGroupIds } from "@/server/notification/demo-handlers";
import { MemorySideEffectStore } from "@/server/notification/side-effects";
import { KafkaTransport } from "@/server/transport";
import { DemoService } from "./demo";

/**
 * Two people's demos on one broker and one Redis (the stack's 127.0.0.1:9092 and :6379), each
 * with its own SERVICE_NAME and DEMO_TOPIC as the README says to isolate them: each consumes,
 * deduplicates and poisons only its own traffic. The services and topics are random per run.
 */
const id = randomBytes(4).toString("hex");
const ENV = { KAFKA_BROKERS: "127.0.0.1:9092", REDIS_URL: "redis://127.0.0.1:6379" };
const redis = createDedupRedis({ url: ENV.REDIS_URL });

interface Instance {
  c: AppConfig;
  demo: DemoService;
  transport: KafkaTransport;
  registry: Registry;
}

function instance(name: string, rate: number): Instance {
  const c = parseConfig({ ...ENV, SERVICE_NAME: `iso-${name}-${id}`, DEMO_TOPIC: `iso.${name}.${id}` });
  const registry = new Registry();
  const transport = new KafkaTransport(c.KAFKA_BROKERS!);
  const demo = new DemoService({
    transport,
    repository: new RedisRepository(redis),
    redis,
    store: new MemorySideEffectStore(),
    service: c.SERVICE_NAME,
    topic: c.DEMO_TOPIC,
    dlqTopic: c.demoDlqTopic,
    registry,
    ratePerSec: rate,
    commitIntervalMs: 500,
    backgroundDuplicates: false,
  });
  return { c, demo, transport, registry };
}

const a = instance("a", 20);
const b = instance("b", 10);

type Counter = { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> };
const values = async (c: Counter) => (await c.get()).values.filter((v) => v.value > 0);
const sum = (vs: Array<{ value: number }>) => vs.reduce((s, v) => s + v.value, 0);

beforeAll(async () => {
  await Promise.all([a.demo.start(), b.demo.start()]);
  // Both re-publish a share of their events: a demo must not swallow (or count) the other's copies.
  for (const x of [a, b]) x.demo.setSources({ forwarderRepublish: { enabled: true, rate: 0.2, delayMs: 500 } });
  // A record nobody can read, on B's topic only: B's marshal counter moves, A's must not.
  await b.transport.produceRaw(b.c.DEMO_TOPIC, {
    headers: { [EVENT_TYPE_KEY]: "review.created" },
    value: Buffer.from("{}"),
  });
  await new Promise((r) => setTimeout(r, 8_000));
  for (const x of [a, b]) x.demo.setSources({ traffic: { enabled: false } });
  await new Promise((r) => setTimeout(r, 2_000));
}, 90_000);

afterAll(async () => {
  for (const x of [a, b]) {
    await x.demo.stop();
    await x.transport.deleteGroups(demoGroupIds(x.c.SERVICE_NAME)).catch(() => undefined);
    await x.transport.deleteTopics([x.c.DEMO_TOPIC, x.c.demoDlqTopic]).catch(() => undefined);
    await x.transport.close();
    await deleteKeysByPrefix(redis, `${x.c.SERVICE_NAME}:dedup`);
  }
  redis.disconnect();
});

describe("two demos on one broker with their own SERVICE_NAME and DEMO_TOPIC", () => {
  it("the DLQ is derived from DEMO_TOPIC, and CONSUMER_TOPICS defaults to it", () => {
    expect(a.c.demoDlqTopic).toBe(`iso.a.${id}.dlq`);
    expect(a.c.CONSUMER_TOPICS).toEqual([`iso.a.${id}`]);
    expect(() => parseConfig({ DEMO_TOPIC: "has space" })).toThrow(/DEMO_TOPIC — expected a Kafka topic name/);
    expect(() => parseConfig({ DEMO_TOPIC: "x.dlq" })).toThrow(/DEMO_TOPIC — expected the main topic/);
  });

  it("each consumes only its own topic: every processed, deduplicated and poisoned series is its own", async () => {
    for (const [x, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const m = dedupMetrics(x.registry);
      const processed = await values(m.processed);
      expect(sum(processed)).toBeGreaterThan(20);
      for (const v of [...processed, ...(await values(m.deduplicated)), ...(await values(m.poisoned))]) {
        expect(v.labels.topic, JSON.stringify(v.labels)).toBe(x.c.DEMO_TOPIC);
        expect(v.labels.service).toBe(x.c.SERVICE_NAME);
      }
      expect(processed.some((v) => v.labels.topic === other.c.DEMO_TOPIC)).toBe(false);
    }
  });

  it("each deduplicates its own re-published copies, and only as many as it published", async () => {
    for (const x of [a, b]) {
      const records = (await x.transport.readAll(x.c.DEMO_TOPIC)).filter((r) => r.ok);
      const copies = records.length - new Set(records.map((r) => (r.ok ? r.uuid : ""))).size;
      const dedup = sum(await values(dedupMetrics(x.registry).deduplicated));
      expect(dedup).toBeGreaterThan(0);
      expect(dedup).toBeLessThanOrEqual(copies);
    }
  });

  it("the other's unreadable record is not counted: only B's marshal errors moved", async () => {
    const marshal = async (x: Instance) =>
      sum((await values(dedupMetrics(x.registry).errors)).filter((v) => v.labels.reason === "marshal"));
    expect(await marshal(b)).toBe(1);
    expect(await marshal(a)).toBe(0);
  });
});
