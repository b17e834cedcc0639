/**
 * The demo consumer on REAL Kafka, deduplicating on the REAL 3-master Redis Cluster, while
 * `redis-cli --cluster reshard` moves slots away from one master and back: 20,000
 * events published (5% of them published again: a forwarder re-publish) to an own 6-partition
 * topic, consumed by the demo service's three handler groups with its duplicate sources on — extra
 * replicas joining and leaving (real rebalances that re-read the uncommitted tail), 2% of pushes
 * failing before the send (release on failure, retry). The side-effect store counts every push and
 * every duplicate that reached a handler: 0 lost, 0 duplicate side effects, 0 repeats that got past
 * the Deduplicator; the masters' errorstats show the MOVED/ASK redirections. Layout restored after.
 * Needs `npm run stack:up` (Kafka) and `npm run stack:cluster`.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Cluster } from "ioredis";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Message, RedisRepository } from "@/server/dedup";
import { CORRELATION_ID_KEY, EVENT_TYPE_KEY, METRIC_NAMES } from "@/names/dedup";
import { ConsumerGroupDescriber } from "@/server/observe/kafka/consumer-group";
import { DemoService } from "./demo";
import { DEMO_HANDLER_SPECS, demoGroupIds } from "@/server/notification/demo-handlers";
import { createDedupRedis, deleteKeysByPrefix } from "@/server/dedup-redis";
import { MemorySideEffectStore, type PushOptions, type SideEffectStore } from "@/server/notification/side-effects";
import { KafkaTransport } from "@/server/transport";
import { clusterClient, clusterMasters, type MasterInfo } from "@/server/testing/redis-cluster";

const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",");
const CLUSTER_NODES = (process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002").split(",");
const EVENTS = 20_000;
const CHUNK = 500;
const RESHARD_SLOTS = 1200;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function redirections(c: Cluster): Promise<number> {
  let n = 0;
  for (const node of c.nodes("master")) {
    const text = await node.info("errorstats");
    for (const m of text.matchAll(/errorstat_(MOVED|ASK):count=(\d+)/g)) n += Number(m[2]);
  }
  return n;
}

function reshard(
  entry: string,
  from: string,
  to: string,
  slots: number,
): Promise<{ code: number | null; ms: number; tail: string }> {
  const t0 = Date.now();
  const child = spawn(
    "redis-cli",
    [
      "--cluster",
      "reshard",
      entry,
      "--cluster-from",
      from,
      "--cluster-to",
      to,
      "--cluster-slots",
      String(slots),
      "--cluster-yes",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  child.stderr.on("data", (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const timer = setTimeout(() => {
    if (child.pid && child.exitCode === null) process.kill(child.pid, "SIGKILL");
  }, 90_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, ms: Date.now() - t0, tail: out.slice(-600) });
    }),
  );
}

/** The demo's side-effect store, also counting the handler runs the idempotent send absorbed (repeats the Deduplicator let through). */
class CountingStore implements SideEffectStore {
  readonly kind = "memory" as const;
  readonly pushes = new Map<string, number>();
  skipped = 0;
  // Deliveries only: a re-send the provider absorbed by its idempotency key delivered nothing.
  private readonly inner = new MemorySideEffectStore((handler, id, r) => {
    if (!r.absorbed) this.pushes.set(`${handler}/${id}`, (this.pushes.get(`${handler}/${id}`) ?? 0) + 1);
  });
  async sendOnce(handler: string, eventId: string, push: () => Promise<void>) {
    const r = await this.inner.sendOnce(handler, eventId, push);
    if (r === "skipped") this.skipped++;
    return r;
  }
  push(handler: string, eventId: string, opts?: PushOptions) {
    return this.inner.push(handler, eventId, opts);
  }
  close() {
    return this.inner.close();
  }
}

let admin: Admin;
let cluster: Cluster;
let setupError: Error | null = null;
let layoutBefore: MasterInfo[] = [];

beforeAll(async () => {
  admin = new Kafka({
    clientId: "demo-reshard-test",
    brokers: BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    retry: { retries: 1 },
  }).admin();
  try {
    await admin.connect();
    await admin.listTopics();
  } catch (e) {
    setupError = new Error(
      `Kafka at ${BROKERS.join(",")} is not usable (${(e as Error).message}): run npm run stack:up`,
    );
    return;
  }
  cluster = clusterClient({ clusterRetryStrategy: () => 200 }, CLUSTER_NODES);
  try {
    await Promise.race([
      new Promise((r) => cluster.once("ready", r)),
      sleep(5000).then(() => Promise.reject(new Error("not ready after 5 s"))),
    ]);
    layoutBefore = await clusterMasters(cluster);
    if (layoutBefore.length < 3 || !layoutBefore.every((m) => m.slots > RESHARD_SLOTS))
      throw new Error(`unexpected layout ${JSON.stringify(layoutBefore)}`);
  } catch (e) {
    setupError = new Error(
      `Redis Cluster at ${CLUSTER_NODES.join(",")} is not usable (${(e as Error).message}): run npm run stack:cluster`,
    );
  }
}, 30_000);

afterAll(async () => {
  cluster?.disconnect();
  await admin?.disconnect().catch(() => undefined);
});

beforeEach(() => {
  if (setupError) throw setupError;
});

describe("demo consumer on Kafka + Redis Cluster through a resharding (20,000 events)", () => {
  it("loses nothing, duplicates no side effect, and every repeat is swallowed by the Deduplicator", async () => {
    const tag = randomBytes(4).toString("hex");
    const service = `rs-${tag}`;
    const topic = `reshard-${tag}`;
    const dlqTopic = `${topic}.dlq`;
    const groups = demoGroupIds(service);
    const registry = new Registry();
    const store = new CountingStore();
    const redis = createDedupRedis({ clusterNodes: CLUSTER_NODES }, `reshard-${tag}`);
    const transport = new KafkaTransport(BROKERS);
    const demo = new DemoService({
      transport,
      repository: new RedisRepository(redis),
      redis,
      store,
      service,
      registry,
      ratePerSec: 0,
      topic,
      dlqTopic,
    });
    const describer = new ConsumerGroupDescriber(admin);
    const [source, target] = layoutBefore;
    const ids: Array<{ uuid: string; type: string; handler: string }> = [];
    let reshards: Promise<[Awaited<ReturnType<typeof reshard>>, Awaited<ReturnType<typeof reshard>>]> | null = null;
    let resharding = false;
    const before = await redirections(cluster);
    const t0 = Date.now();
    try {
      await demo.start();
      // Duplicate sources of the demo: extra replicas join and leave (rebalances re-read the uncommitted
      // tail), 2% of pushes fail before the send (release on failure, then retry).
      demo.setSources({
        rebalance: { enabled: true, replicas: 1, periodMs: 2500 },
        retryOnError: { enabled: true, rate: 0.02 },
      });
      const mk = (uuid: string, type: string, republish = false): Message => ({
        uuid,
        metadata: {
          [EVENT_TYPE_KEY]: type,
          [CORRELATION_ID_KEY]: ulid(),
          ...(republish ? { "Forwarder-Republish": "1" } : {}),
        },
        payload: Buffer.from(JSON.stringify({ n: uuid })),
        signal: new AbortController().signal,
        context: {},
      });
      for (let i = 0; i < EVENTS; i += CHUNK) {
        const chunk = Array.from({ length: Math.min(CHUNK, EVENTS - i) }, (_, j) => {
          const spec = DEMO_HANDLER_SPECS[(i + j) % DEMO_HANDLER_SPECS.length]!;
          return { uuid: ulid(), type: spec.eventType, handler: spec.name };
        });
        ids.push(...chunk);
        await transport.publisher.publish(topic, ...chunk.map((e) => mk(e.uuid, e.type)));
        if (i >= CHUNK) {
          const again = ids.slice(i - CHUNK, i).filter((_, j) => j % 20 === 0);
          await transport.publisher.publish(topic, ...again.map((e) => mk(e.uuid, e.type, true)));
        }
        if (i === 4 * CHUNK) {
          resharding = true;
          reshards = (async () => {
            const out = await reshard(source!.addr, source!.id, target!.id, RESHARD_SLOTS);
            const back = await reshard(source!.addr, target!.id, source!.id, RESHARD_SLOTS);
            resharding = false;
            return [out, back] as [typeof out, typeof back];
          })();
        }
        await sleep(resharding ? 300 : 20);
      }
      // Done when every event had its push and the slot moves are over; then the extra replicas
      // stop coming and going, and a graceful stop commits what was acked.
      const deadline = Date.now() + 240_000;
      while (store.pushes.size < EVENTS || resharding) {
        if (Date.now() > deadline)
          throw new Error(`not finished in 240 s: pushes ${store.pushes.size}/${EVENTS}, resharding ${resharding}`);
        await sleep(500);
      }
      demo.setSources({ rebalance: { enabled: false } });
      await sleep(3000); // let the last re-reads of the rebalances arrive and be swallowed
      await demo.stop();
      const lags = await Promise.all(
        groups.map(async (group) => (await describer.describe({ topic, group })).groups[0]?.totalLag ?? -1),
      );
      expect(lags, "every group committed the whole topic after the graceful stop").toEqual([0, 0, 0]);
      const runMs = Date.now() - t0;
      const [out, back] = await reshards!;
      const movedAsk = (await redirections(cluster)) - before;
      const counter = async (name: string, labels: Record<string, string> = {}) => {
        const m = registry.getSingleMetric(name);
        if (!m) return 0;
        return (await m.get()).values
          .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
          .reduce((a, v) => a + v.value, 0);
      };
      const swallowed = await counter(METRIC_NAMES.processed, { result: "deduplicated" });
      const storeErrors = await counter(METRIC_NAMES.errors);
      const errorReasons = Object.fromEntries(
        ((await registry.getSingleMetric(METRIC_NAMES.errors)?.get())?.values ?? [])
          .filter((v) => v.value > 0)
          .map((v) => [String(v.labels.reason), v.value]),
      );
      const lost = ids.filter((e) => !store.pushes.has(`${e.handler}/${e.uuid}`));
      const dup = [...store.pushes].filter(([, n]) => n > 1);
      console.info(
        `[demo resharding] ${EVENTS} events (+5% re-published) in ${runMs} ms; ${RESHARD_SLOTS} slots out in ${out.ms} ms, back in ${back.ms} ms; ` +
          `MOVED+ASK ${movedAsk}; swallowed ${swallowed}; repeats past the Deduplicator ${store.skipped}; dedup store errors ${storeErrors} ${JSON.stringify(errorReasons)}; ` +
          `lost ${lost.length}; duplicate side effects ${dup.length}`,
      );
      expect(out.code, out.tail).toBe(0);
      expect(back.code, back.tail).toBe(0);
      expect(lost.slice(0, 5), `${lost.length} events without their push`).toEqual([]);
      expect(dup.slice(0, 5), `${dup.length} events pushed twice`).toEqual([]);
      expect(store.pushes.size).toBe(EVENTS);
      // A repeat reaches a handler only through fail-open (spec §4): a store call that failed or
      // timed out during the migration lets the message through, and the handler's own
      // idempotency (spec §5) stops it. So there can be no more of them than counted store errors.
      expect(store.skipped, "repeats that reached a handler without a counted store error").toBeLessThanOrEqual(
        storeErrors,
      );
      expect(swallowed, "the re-published copies at least were swallowed").toBeGreaterThanOrEqual(EVENTS / 20 - 50);
      expect(movedAsk, "clients were redirected during the migration").toBeGreaterThan(0);
    } finally {
      await demo.stop().catch(() => undefined);
      await transport.close().catch(() => undefined);
      const now = await clusterMasters(cluster);
      const src = now.find((m) => m.id === source!.id);
      if (reshards) await (reshards as Promise<unknown>).catch(() => undefined);
      const after = await clusterMasters(cluster);
      const s2 = after.find((m) => m.id === source!.id) ?? src;
      if (s2 && s2.slots < source!.slots) await reshard(source!.addr, target!.id, source!.id, source!.slots - s2.slots);
      await deleteKeysByPrefix(redis, service).catch(() => 0);
      redis.disconnect();
      await admin.deleteTopics({ topics: [topic, dlqTopic] }).catch(() => undefined);
      await admin.deleteGroups(groups).catch(() => undefined);
    }
    expect((await clusterMasters(cluster)).map((m) => [m.addr, m.slots])).toEqual(
      layoutBefore.map((m) => [m.addr, m.slots]),
    );
  }, 400_000);
});

describe("demo consumer: lag of an idle group", () => {
  it("reaches 0 within the commit interval after the traffic stops (no phantom lag on the dashboard)", async () => {
    const tag = randomBytes(4).toString("hex");
    const service = `idle-${tag}`;
    const topic = `idle-${tag}`;
    const groups = demoGroupIds(service);
    const store = new CountingStore();
    const redis = createDedupRedis({ clusterNodes: CLUSTER_NODES }, `idle-${tag}`);
    const transport = new KafkaTransport(BROKERS);
    const commitIntervalMs = 2000; // the demo's default
    const demo = new DemoService({
      transport,
      repository: new RedisRepository(redis),
      redis,
      store,
      service,
      ratePerSec: 0,
      topic,
      dlqTopic: `${topic}.dlq`,
      commitIntervalMs,
    });
    const describer = new ConsumerGroupDescriber(admin);
    try {
      await demo.start();
      const events = Array.from({ length: 300 }, (_, i) => ({
        uuid: ulid(),
        type: DEMO_HANDLER_SPECS[i % 3]!.eventType,
      }));
      await transport.publisher.publish(
        topic,
        ...events.map((e) => ({
          uuid: e.uuid,
          metadata: { [EVENT_TYPE_KEY]: e.type },
          payload: Buffer.from("{}"),
          signal: new AbortController().signal,
          context: {},
        })),
      );
      for (let i = 0; i < 120 && store.pushes.size < events.length; i++) await sleep(250);
      expect(store.pushes.size).toBe(events.length);
      await sleep(commitIntervalMs + 3000);
      const lags = await Promise.all(
        groups.map(async (group) => (await describer.describe({ topic, group })).groups[0]?.totalLag ?? -1),
      );
      // Regression (fixed in 03be7f8): the subscriber used to commit acked offsets only when a later
      // ack arrived after the interval, so an idle partition's acked tail stayed uncommitted.
      expect(lags, `lag per group ${commitIntervalMs + 3000} ms after every event was handled`).toEqual([0, 0, 0]);
    } finally {
      await demo.stop().catch(() => undefined);
      await transport.close().catch(() => undefined);
      await deleteKeysByPrefix(redis, service).catch(() => 0);
      redis.disconnect();
      await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
      await admin.deleteGroups(groups).catch(() => undefined);
    }
  }, 90_000);
});
