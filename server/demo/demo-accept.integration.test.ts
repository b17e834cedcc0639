/**
 * On real Kafka + Redis: the live demo's three handlers (each its own consumer group
 * on one topic, routing by `Event-Type` with the Router's `accept`) claim keys only for the records
 * they take. The dedup store is a private `redis-server` (random port, stopped by pid) so that
 * `INFO commandstats` counts the demo's commands and nothing else.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEDUP_ERROR_REASONS,
  EVENT_TYPE_KEY,
  POISON_REASON_CLASSES,
  PROCESSED_RESULTS,
  WATERMILL_UUID_HEADER,
} from "@/names/dedup";
import { dedupMetrics, RedisRepository } from "@/server/dedup";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { DemoService } from "./demo";
import { DEMO_HANDLER_SPECS, demoGroupIds } from "@/server/notification/demo-handlers";
import { createDedupRedis, type RedisClient } from "@/server/dedup-redis";
import { MemorySideEffectStore } from "@/server/notification/side-effects";
import { KafkaTransport } from "@/server/transport";
import { parseCommandStats } from "@/server/observe/watchers/redis-command-time";

const RECORDS = 300;
const id = randomBytes(4).toString("hex");
const service = `accepttest${id}`;
const topic = `accepttest.${id}`;
const dlqTopic = `${topic}.dlq`;
const registry = new Registry();
const transport = new KafkaTransport(["127.0.0.1:9092"]);
let own: OwnRedis;
let redis: RedisClient;
let admin: Redis;
let demo: DemoService;
let producer: Producer;

/** `INFO commandstats` → calls per command. */
async function commandCalls(r: Redis): Promise<Record<string, number>> {
  return Object.fromEntries(
    [...parseCommandStats(await r.info("commandstats"))].map(([command, s]) => [command, s.calls]),
  );
}

/** Every key under `prefix:` with its value (SCAN, then GET). */
async function keysUnder(r: Redis, prefix: string): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    for (const k of keys) out.set(k, await r.get(k));
  } while (cursor !== "0");
  return out;
}

const processedBy = async (handler: string, result: string) =>
  (await dedupMetrics(registry).processed.get()).values.find(
    (v) => v.labels.handler === handler && v.labels.result === result,
  )?.value;

beforeAll(async () => {
  own = await startOwnRedis();
  redis = createDedupRedis({ url: own.url });
  admin = new Redis(own.url, { maxRetriesPerRequest: 1 });
  demo = new DemoService({
    transport,
    repository: new RedisRepository(redis),
    redis,
    store: new MemorySideEffectStore(),
    service,
    registry,
    ratePerSec: 0,
    topic,
    dlqTopic,
    commitIntervalMs: 0,
  });
  await demo.start();
  producer = new Kafka({ clientId: "accept-test", brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
}, 120_000);

afterAll(async () => {
  await producer?.disconnect();
  await demo?.stop();
  await transport.deleteGroups(demoGroupIds(service)).catch(() => undefined);
  await transport.deleteTopics([topic, dlqTopic]).catch(() => undefined);
  await transport.close();
  redis?.disconnect();
  admin?.disconnect();
  await own?.stop();
}, 60_000);

describe("the demo's handlers claim keys only for the records they take (real Kafka, own Redis)", () => {
  it("before any record: every error reason, result and DLQ reason class exists at 0 (the first of each is an increase)", async () => {
    const m = dedupMetrics(registry);
    const errors = (await m.errors.get()).values.filter((v) => v.labels.service === service);
    expect(errors.map((v) => v.labels.reason).sort()).toEqual([...DEDUP_ERROR_REASONS].sort());
    expect(errors.every((v) => v.value === 0)).toBe(true);
    for (const h of DEMO_HANDLER_SPECS) {
      for (const r of PROCESSED_RESULTS) expect(await processedBy(h.name, r)).toBe(0);
      const poisoned = (await m.poisoned.get()).values.filter(
        (v) => v.labels.handler === h.name && v.labels.service === service,
      );
      expect(poisoned.map((v) => v.labels.reason_poisoned).sort()).toEqual([...POISON_REASON_CLASSES].sort());
    }
  });

  it(`${RECORDS} records of mixed event types: one claim and one done per (handler, record it takes), no key under the others, ≤ 2 writes per record`, async () => {
    await admin.config("RESETSTAT");
    const byType = new Map<string, string[]>(DEMO_HANDLER_SPECS.map((h) => [h.eventType, []]));
    const types = DEMO_HANDLER_SPECS.map((h) => h.eventType);
    const messages = Array.from({ length: RECORDS }, (_, i) => {
      const type = types[(i * 7) % types.length]!; // mixed and interleaved, 100 of each
      const uuid = ulid();
      byType.get(type)!.push(uuid);
      return { value: JSON.stringify({ seq: i }), headers: { [WATERMILL_UUID_HEADER]: uuid, [EVENT_TYPE_KEY]: type } };
    });
    for (let i = 0; i < messages.length; i += 50) await producer.send({ topic, messages: messages.slice(i, i + 50) });

    const deadline = Date.now() + 90_000;
    for (const h of DEMO_HANDLER_SPECS) {
      while ((await processedBy(h.name, "success")) !== byType.get(h.eventType)!.length) {
        if (Date.now() > deadline)
          throw new Error(
            `${h.name}: ${await processedBy(h.name, "success")} of ${byType.get(h.eventType)!.length} processed in 90 s`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    // The done marks are sent before each batch resolves and awaited before its commit; give the last one time to land.
    await new Promise((r) => setTimeout(r, 1500));
    const calls = await commandCalls(admin);

    for (const h of DEMO_HANDLER_SPECS) {
      const keys = await keysUnder(admin, `${service}:dedup:${h.name}`);
      const mine = byType.get(h.eventType)!;
      // Exactly its own records, each done with its first delivery's position; nothing for the others' records (no lease of any state).
      expect([...keys.keys()].sort()).toEqual(mine.map((u) => `${service}:dedup:${h.name}:${u}`).sort());
      for (const v of keys.values())
        expect(v).toMatch(new RegExp(`^done:${topic.replace(/\./g, "\\.")}:\\d+:\\d+#[A-Za-z0-9_-]{7}$`));
      expect(await processedBy(h.name, "deduplicated")).toBe(0);
      expect(await processedBy(h.name, "error")).toBe(0);
    }

    const delivered = RECORDS;
    // The test's own INFO / CONFIG RESETSTAT are not the demo's.
    const dedup = Object.fromEntries(
      Object.entries(calls).filter(([c]) => !c.startsWith("info") && !c.startsWith("config")),
    );
    const total = Object.values(dedup).reduce((a, b) => a + b, 0);
    const writes = (dedup.set ?? 0) + (dedup.del ?? 0) + (dedup.pexpire ?? 0);
    const scripts = (dedup.evalsha ?? 0) + (dedup.eval ?? 0);
    // Sent by the client: script calls, plus any single-key command outside a script (the claim's
    // SET NX GET and DEL of the per-message path). Inside scripts Redis counts SET/GET too.
    console.log(
      `[accept] commandstats delta over ${delivered} delivered records: ${JSON.stringify(dedup)} → ${(writes / delivered).toFixed(2)} writes (SET/DEL) per record, ` +
        `${((dedup.get ?? 0) / delivered).toFixed(2)} GET (compare of compare-and-set), ${(scripts / delivered).toFixed(3)} script calls per record, ${(total / delivered).toFixed(2)} commands per record counting those run inside scripts`,
    );
    // One claim (SET NX) and one done (SET) per record taken, no release (DEL): exactly 2 writes each.
    expect(dedup.set).toBe(2 * delivered);
    expect(dedup.del ?? 0).toBe(0);
    expect(writes / delivered).toBeLessThanOrEqual(2);
    // The done mark's compare reads the key once; round trips are per batch (scripts), far below one per record.
    expect(dedup.get ?? 0).toBeLessThanOrEqual(delivered);
    expect(scripts / delivered).toBeLessThanOrEqual(2);
  }, 150_000);
});
