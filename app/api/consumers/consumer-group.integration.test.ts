/**
 * The consumer-group description against the real Kafka broker while 1, 2 and 3 worker PROCESSES
 * share one group on a 6-partition topic. The workers are `scripts/bench/scale.ts
 * --worker`: the library's KafkaSubscriber → Router → defaultStack (Deduplicator on the standalone
 * Redis) — the consumer engineer's `npm run worker` had not landed when this was written.
 *
 * Checks what the dashboard shows: each generation's assignments are disjoint and cover all six
 * partitions, every replica appears under its own clientId, lag falls to 0 as the workers commit,
 * per-replica rates are measured, and a group whose workers left is Empty with its lag visible.
 * Needs `npm run stack:up` (Kafka, Redis).
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Kafka, logLevel, Partitioners, type Admin } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumersResponseSchema, type ConsumerGroupView } from "@/lib/api/consumers";
import { GET } from "./route";
import { startWorker, stopWorker } from "@/scripts/bench/scale";
import { encodeRecord } from "@/server/transport/watermill-codec";
import { parseConfig } from "@/server/config";
import { ConsumerGroupDescriber } from "@/server/observe/kafka/consumer-group";
import { createTopicsReady } from "@/server/transport/topics";

const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",");
const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const tag = randomBytes(4).toString("hex");
const topic = `cg-${tag}`;
const group = `cg-${tag}`;
const service = `cg-${tag}`;

let kafka: Kafka;
let admin: Admin;
let describer: ConsumerGroupDescriber;
let setupError: Error | null = null;
const workers: Array<ReturnType<typeof startWorker>> = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  kafka = new Kafka({
    clientId: "cg-test",
    brokers: BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    retry: { retries: 1 },
  });
  admin = kafka.admin();
  try {
    await admin.connect();
    // A broker that has just started (other files creating their topics at the same moment) answers
    // a new topic as unknown for a while: the product's own helper waits for it and its leaders,
    // while the client's one retry is kept short so that a broker that is not running fails at once.
    await createTopicsReady(admin, [{ name: topic, partitions: 6 }]);
  } catch (e) {
    setupError = new Error(
      `Kafka at ${BROKERS.join(",")} is not usable (${(e as Error).message}): run npm run stack:up`,
    );
  }
  describer = new ConsumerGroupDescriber(admin, { minRateWindowMs: 500 });
}, 30_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => stopWorker(w, 5000).catch(() => null)));
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.deleteGroups([group]).catch(() => undefined);
  await admin.disconnect().catch(() => undefined);
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r
    .connect()
    .then(async () => {
      let cursor = "0";
      do {
        const [next, keys] = await r.scan(cursor, "MATCH", `${service}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) await r.unlink(...keys);
      } while (cursor !== "0");
    })
    .catch(() => undefined);
  r.disconnect();
}, 60_000);

/** Polls the description until `ok` holds (or fails with the last view). */
async function until(
  ok: (g: ConsumerGroupView | undefined) => boolean,
  what: string,
  ms = 60_000,
): Promise<ConsumerGroupView> {
  const deadline = Date.now() + ms;
  let last: ConsumerGroupView | undefined;
  for (;;) {
    last = (await describer.describe({ topic, group })).groups[0];
    if (ok(last)) return last!;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${ms} ms; last view ${JSON.stringify(last)}`);
    await sleep(250);
  }
}

function expectDisjointAndComplete(v: ConsumerGroupView, members: number): void {
  expect(v.members).toHaveLength(members);
  const held = v.members.flatMap((m) => m.partitions);
  expect([...held].sort()).toEqual([0, 1, 2, 3, 4, 5]);
  expect(v.overlapping).toEqual([]);
  expect(v.unassigned).toEqual([]);
  expect(new Set(v.members.map((m) => m.clientId)).size).toBe(members);
  // Balanced: 6 partitions over k members differ by at most one.
  const sizes = v.members.map((m) => m.partitions.length);
  expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
}

async function produce(n: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const messages = Array.from({ length: n }, (_, i) => {
    const rec = encodeRecord({
      uuid: `01JD8X3Q${randomBytes(9).toString("hex").toUpperCase()}`,
      metadata: {},
      payload: Buffer.from(`{"i":${i}}`),
    });
    return { value: rec.value, headers: rec.headers, partition: i % 6 };
  });
  await producer.send({ topic, acks: 1, messages });
  await producer.disconnect();
}

describe("consumer-group description of 1, 2 and 3 worker processes on a 6-partition topic", () => {
  it("each generation's assignments are disjoint, cover all six partitions and name every replica", async () => {
    if (setupError) throw setupError;
    for (let k = 1; k <= 3; k++) {
      const w = startWorker({ topic, group, replica: `replica-${k}`, service, redis: "standalone" });
      workers.push(w);
      await w.joined;
      const v = await until(
        (g) => g?.state === "Stable" && g.members.length === k && g.unassigned.length === 0,
        `${k} member(s) stable`,
      );
      expectDisjointAndComplete(v, k);
      expect(v.members.map((m) => m.clientId).sort()).toEqual(workers.map((x) => `${group}/${x.replica}`).sort());
      expect(v.members.every((m) => m.host.length > 0)).toBe(true);
    }
  }, 150_000);

  it("lag falls to 0 as the three replicas commit, and each replica's processed rate is measured", async () => {
    if (setupError) throw setupError;
    await produce(600);
    const waiting = await until((g) => g?.totalLag === 600, "600 messages waiting");
    expect(waiting.partitions.map((p) => p.lag)).toEqual([100, 100, 100, 100, 100, 100]);
    for (const w of workers) w.child.stdin.write("go\n");
    const first = await until((g) => g?.totalLag === 0, "lag 0");
    expect(first.partitions.map((p) => p.committedOffset)).toEqual([100, 100, 100, 100, 100, 100]);

    // Rates: a describer of its own, asked only twice, so its window spans the whole second wave.
    const rates = new ConsumerGroupDescriber(admin, { minRateWindowMs: 500 });
    const anchor = (await rates.describe({ topic, group })).groups[0]!;
    expect(anchor.rateWindowSeconds).toBeNull();
    expect(anchor.members.every((m) => m.processedPerSecond === null)).toBe(true);
    await produce(3000);
    const done = await until((g) => g?.totalLag === 0, "lag 0 after 3000 more");
    expect(done.partitions.map((p) => p.committedOffset)).toEqual([600, 600, 600, 600, 600, 600]);
    expect(done.members.map((m) => m.lag)).toEqual([0, 0, 0]);
    await sleep(600);
    const rated = (await rates.describe({ topic, group })).groups[0]!;
    const window = rated.rateWindowSeconds!;
    expect(window).toBeGreaterThan(0.5);
    for (const m of rated.members) {
      // 500 messages per partition over the window, summed over the member's partitions (the
      // window is reported rounded to 10 ms, so allow 2%).
      const expected = (500 * m.partitions.length) / window;
      expect(
        Math.abs((m.processedPerSecond ?? 0) - expected),
        `${m.clientId}: ${m.processedPerSecond} vs ${expected.toFixed(1)}`,
      ).toBeLessThan(expected * 0.02);
      const own = rated.partitions
        .filter((p) => m.partitions.includes(p.partition))
        .map((p) => p.processedPerSecond ?? 0);
      expect(m.processedPerSecond ?? 0).toBeCloseTo(
        own.reduce((a, b) => a + b, 0),
        1,
      );
    }
  }, 120_000);

  it("GET /api/consumers serves the same description, validated by its schema", async () => {
    if (setupError) throw setupError;
    const g = globalThis as typeof globalThis & {
      __dedupHealthConfig?: unknown;
      __dedupHealthConsumers?: { admin: Admin };
    };
    const saved = g.__dedupHealthConfig;
    g.__dedupHealthConfig = parseConfig({ KAFKA_BROKERS: BROKERS.join(","), CONSUMER_TOPICS: topic });
    try {
      const res = await GET(new Request(`http://localhost/api/consumers?topic=${topic}`));
      expect(res.status).toBe(200);
      const body = consumersResponseSchema.parse(await res.json());
      expect(body.partitionCount).toBe(6);
      const mine = body.groups.find((x) => x.groupId === group);
      expect(mine, "the group is listed without asking for it").toBeDefined();
      expectDisjointAndComplete(mine!, 3);
      const missing = await GET(new Request(`http://localhost/api/consumers?topic=${topic}-missing`));
      expect(missing.status).toBe(404);
    } finally {
      await g.__dedupHealthConsumers?.admin.disconnect().catch(() => undefined);
      delete g.__dedupHealthConsumers;
      g.__dedupHealthConfig = saved;
    }
  }, 30_000);

  it("when a replica leaves the rest take its partitions; when all left the group is Empty and its lag shows", async () => {
    if (setupError) throw setupError;
    await stopWorker(workers.pop()!);
    const two = await until(
      (g) => g?.state === "Stable" && g.members.length === 2 && g.unassigned.length === 0,
      "2 members after one left",
    );
    expectDisjointAndComplete(two, 2);
    while (workers.length) await stopWorker(workers.pop()!);
    const empty = await until((g) => g?.state === "Empty", "Empty group");
    expect(empty.members).toEqual([]);
    expect(empty.unassigned).toEqual([0, 1, 2, 3, 4, 5]);
    await produce(60);
    const lagging = await until((g) => g?.totalLag === 60, "lag of the new messages");
    expect(lagging.partitions.map((p) => p.committedOffset)).toEqual([600, 600, 600, 600, 600, 600]);
    expect(lagging.partitions.map((p) => p.lag)).toEqual([10, 10, 10, 10, 10, 10]);
  }, 90_000);
});
