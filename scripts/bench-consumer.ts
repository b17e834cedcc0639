/**
 * `npm run bench:consumer` — end-to-end consumer throughput on the local Kafka broker: our Kafka
 * subscriber + the default middleware stack + the Redis Deduplicator against raw kafkajs, in the
 * same run, alternating, so that the machine's noise falls on both alike.
 *
 *   npm run bench:consumer -- [--messages 500000] [--partitions 6] [--rounds 3] [--size 200]
 *     [--variants raw,ours] [--brokers 127.0.0.1:9092] [--redis redis://127.0.0.1:6379]
 *     [--own-redis] [--concurrency 3] [--chunk 100] [--commit-interval 0] [--round-timeout 180] [--json out.json]
 *     [--profile <dir>]   (V8 CPU profile of the LAST round's consumes, <dir>/<variant>-r<round>.cpuprofile;
 *                          the per-area split goes into the JSON detail)
 *   npm run bench:consumer -- --profile-top <file.cpuprofile> [--top 30]   (self-time summary)
 *   npm run bench:consumer -- --breakdown   (no Kafka: CPU µs per message of the Router with each
 *     middleware of the default stack added in turn, in-memory store; then the Redis server's and
 *     the client's CPU per key for batch claims and batch done marks, "script" vs "pipeline", on an
 *     own redis-server, next to a pipelined plain SET — the floor of one write)
 *
 * 1. A fresh topic (random name, `--partitions`) is pre-filled with `--messages` records in
 *    Watermill's wire format (`_watermill_message_uuid` = a ULID, `--size` bytes of JSON payload),
 *    spread evenly over the partitions.
 * 2. Each round, in alternating order, consumes the whole topic to its end with a fresh consumer
 *    group per variant:
 *    - `raw`  — kafkajs `eachBatch` with a no-op (kafkajs' own auto-resolve and auto-commit);
 *    - `ours` — `KafkaSubscriber` (default options unless `--chunk` / `--commit-interval`) →
 *      `Router.deliverBatch` → `defaultStack` (correlationId, recoverer, poisonQueue, retry,
 *      Deduplicator with lease marking, batch pre-claims and batched done marks, metrics on a
 *      private Registry) → a no-op handler. Keys go to a random prefix on `--redis`, deleted after
 *      each round (a fresh prefix per round: each round claims every key anew);
 *    - `sub`  — `KafkaSubscriber` → Router → no-op, without middleware (splits transport from dedup);
 *    - `mem`  — as `ours` with the in-memory repository (splits the stack's CPU from Redis' round trips);
 *    - `rel`  — as `ours` with the "release" marking (one Redis write per message instead of two);
 *    - `floor` — the least Redis work of any Redis-backed dedup: kafkajs `eachBatch` + one pipelined
 *      `SET key 1 NX PX ttl` per message, one pipeline per batch awaited before the batch resolves;
 *    - `naive` — the naive peer, what a user writes from the seed's snippet: kafkajs `eachMessage` +
 *      `await redis.set(key, "1", "PX", ttl, "NX")` per message, `partitionsConsumedConcurrently` =
 *      the partition count, a plain `new Redis(url)`;
 *    - `cas` / `pipe` — A/B of the done mark: as `ours` with the compare-and-set script of before
 *      issue 15 / with the unconditional `SET … GET` marks as a native pipeline instead of a script.
 *    Both kafkajs consumers use the same fetch settings (`partitionsConsumedConcurrently` = the
 *    subscriber's default 3, `maxWaitTimeInMs` 250) so the ratio isolates our layers.
 *    messages/s = messages / (time of the last message − time of the first message), so group join
 *    and the final idle fetch are not counted for either.
 * 3. Prints per-round figures, the medians, the ratio ours/raw (target ≥ 0.8), and the load average.
 *    Deletes the topic, the groups and every Redis key it wrote.
 *
 * Why 6 partitions: ≥ 2 × the 3 partitions each consumer works on concurrently, so a fetch always
 * has work for every slot, while a 2-core machine is not drowned in per-partition overhead.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { Redis } from "ioredis";
import { Kafka, logLevel, Partitioners } from "kafkajs";
import { Registry } from "prom-client";
import { encodeTime } from "ulid";
import { Session } from "node:inspector/promises";
import { kafkaLogCreator } from "@/server/transport/kafka-log";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { encodeRecord } from "@/server/transport/watermill-codec";
import { correlationId } from "@/server/dedup/correlation-id";
import { Deduplicator, type Marking } from "@/server/dedup/deduplicator";
import { MemoryRepository } from "@/server/dedup/memory-repository";
import type { Message, Middleware } from "@/server/dedup/message";
import { poisonQueue } from "@/server/dedup/poison-queue";
import { MemoryPubSub } from "@/server/dedup/pubsub";
import { recoverer } from "@/server/dedup/recoverer";
import { retry } from "@/server/dedup/retry";
import type { Publisher } from "@/server/dedup/pubsub";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "@/server/dedup/redis-repository";
import type { DedupRepository } from "@/server/dedup/repository";
import { Router } from "@/server/dedup/router";
import { defaultStack } from "@/server/dedup/stack";
import { withTimeout } from "@/server/dedup/store-call";
import { startOwnRedis } from "@/server/testing/own-redis";
import { createTopicsReady } from "@/server/transport/topics";
import { arg, flag, intArg } from "./lib/args";
import { emitFigures, runMain } from "./lib/run";

type Variant = "raw" | "ours" | "sub" | "mem" | "rel" | "floor" | "naive" | "cas" | "pipe";
const VARIANTS = ["raw", "ours", "sub", "mem", "rel", "floor", "naive", "cas", "pipe"] as const;
/** Variants through KafkaSubscriber + the default stack on Redis. */
const OURS_ON_REDIS: readonly Variant[] = ["ours", "rel", "cas", "pipe"];

/**
 * `cas`: the repository without `markDone` / `markDoneBatch`, so the Deduplicator marks `done`
 * with the compare-and-set script as before issue 15 (the A/B of that lever, same run).
 */
function casOnly(r: RedisRepository): DedupRepository {
  return {
    kind: r.kind,
    claim: r.claim.bind(r),
    claimBatch: r.claimBatch.bind(r),
    compareAndSet: r.compareAndSet.bind(r),
    compareAndDelete: r.compareAndDelete.bind(r),
    compareAndSetBatch: r.compareAndSetBatch.bind(r),
  };
}
/** The dedup key TTL of the two references (the Deduplicator's default window, 24 h). */
const REF_TTL_MS = 86_400_000;
/** Partitions each consumer works on at once: KafkaSubscriber's default partitionsConsumedConcurrently (3) unless --concurrency. */
let CONCURRENT_PARTITIONS = 3;
const MAX_WAIT_MS = 250; // KafkaSubscriber's default maxWaitTimeMs

/** One consume of the whole topic. */
interface RoundResult {
  variant: Variant;
  round: number;
  messages: number;
  /** First to last message. */
  seconds: number;
  /** Including connect + group join. */
  wallSeconds: number;
  perSec: number;
  /** This process' CPU (user + system) per message over the consume, µs (+ the Redis server's for variants that use Redis). */
  cpuUsPerMsg: number;
  /** The Redis server's CPU per message over the consume (`INFO cpu` delta), µs; 0 without Redis. */
  redisCpuUsPerMsg?: number;
  /** µs per message Redis spent in the commands (`INFO commandstats` usec of EVALSHA/EVAL/SET), this consume. */
  redisCmdUsPerMsg?: number;
}

// ---------- CPU profile summary ----------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives, for the per-area split. */
function areaOf(url: string, fn: string): string {
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)" || fn === "(program)") return fn;
  if (url.includes("node_modules/kafkajs")) return "kafkajs";
  if (url.includes("node_modules/ioredis") || url.includes("node_modules/redis-parser") || url.includes("node_modules/denque")) return "ioredis";
  if (url.includes("node_modules/prom-client")) return "prom-client";
  if (url.includes("/server/dedup/")) return "server/dedup";
  for (const area of ["transport", "notification", "demo", "workshop"]) if (url.includes(`/server/${area}/`)) return `server/${area}`;
  if (url.includes("node_modules/")) return "other node_modules";
  if (url.startsWith("node:") || url === "") return "node internals";
  return "other";
}

/** Self time of a `.cpuprofile`: fraction per area, and the top frames. */
export interface ProfileSplit {
  sampledSeconds: number;
  areas: Record<string, number>;
  top: Array<{ frame: string; fraction: number }>;
}

/** Reads a `.cpuprofile` and splits its self time by area and by frame. */
export function analyzeProfile(path: string, top: number): ProfileSplit {
  const p = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const file = url.replace(/^file:\/\//, "").replace(/^.*\/(node_modules\/)/, "$1").replace(/^.*\/work\/main\//, "");
    const k = `${functionName || "(anonymous)"}  ${file}:${lineNumber + 1}`;
    frames.set(k, (frames.get(k) ?? 0) + us);
    const a = areaOf(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
  }
  return {
    sampledSeconds: +(total / 1e6).toFixed(3),
    areas: Object.fromEntries([...areas].sort((x, y) => y[1] - x[1]).map(([a, us]) => [a, +(us / total).toFixed(4)])),
    top: [...frames]
      .sort((x, y) => y[1] - x[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, fraction: +(us / total).toFixed(4) })),
  };
}

/** The top self-time frames and the self time per area of a `.cpuprofile`, as text. */
export function summarizeProfile(path: string, top: number): string {
  const a = analyzeProfile(path, top);
  const pct = (f: number) => `${(100 * f).toFixed(1).padStart(5)}%`;
  const lines = [`profile ${path}: ${a.sampledSeconds.toFixed(2)} s sampled`, "self time per area:"];
  for (const [area, f] of Object.entries(a.areas)) lines.push(`  ${pct(f)}  ${area}`);
  lines.push(`top ${top} frames by self time:`);
  for (const t of a.top) lines.push(`  ${pct(t.fraction)}  ${t.frame}`);
  return lines.join("\n");
}

// ---------- the benchmark ----------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

const bounded = <T>(p: Promise<T>, ms: number, what: string): Promise<T> => withTimeout(p, ms, () => new Error(`${what} did not finish within ${ms / 1000} s`));

/** Publisher of the default stack's DLQ: nothing fails in this bench, so nothing may arrive here. */
class FailingDlq implements Publisher {
  async publish(topic: string, ...msgs: Message[]): Promise<void> {
    throw new Error(`bench-consumer: ${msgs.length} message(s) reached the DLQ ${topic}; the no-op handler never fails, so this is a bug`);
  }
  async close(): Promise<void> {}
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * Unique ULIDs fast: the time part, 6 random characters drawn once, and a 10-character counter.
 * (`ulid()` draws 16 random characters per id through `randomFillSync`, which made filling the
 * topic the slowest part of the bench.)
 */
function ulidSource(): () => string {
  const time = encodeTime(Date.now(), 10);
  const salt = Array.from(randomBytes(6), (b) => CROCKFORD[b & 31]).join("");
  let n = 0;
  return () => {
    let c = n++;
    let tail = "";
    for (let i = 0; i < 10; i++) {
      tail = CROCKFORD[c & 31] + tail;
      c = Math.floor(c / 32);
    }
    return time + salt + tail;
  };
}

async function fillTopic(kafka: Kafka, topic: string, n: number, partitions: number, size: number): Promise<number> {
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const pad = "x".repeat(Math.max(0, size - 96));
  const nextId = ulidSource();
  const BATCH = 2000;
  const IN_FLIGHT = 4;
  let next = 0;
  let bytes = 0;
  try {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let start = next; start < n; start = next) {
          next = start + BATCH;
          const end = Math.min(n, start + BATCH);
          const byPartition = Array.from({ length: partitions }, () => [] as Array<{ value: Buffer; headers: Record<string, string>; partition: number }>);
          for (let i = start; i < end; i++) {
            const payload = Buffer.from(JSON.stringify({ type: "order.created", order: `o-${i}`, amount: i % 997, at: new Date().toISOString(), pad }));
            bytes += payload.length;
            const rec = encodeRecord({ uuid: nextId(), metadata: { "Correlation-Id": `c-${i}`, "Event-Type": "order.created" }, payload });
            byPartition[i % partitions]!.push({ value: rec.value, headers: rec.headers, partition: i % partitions });
          }
          await producer.sendBatch({ acks: 1, topicMessages: [{ topic, messages: byPartition.flat() }] });
        }
      }),
    );
  } finally {
    await producer.disconnect();
  }
  return bytes / n;
}

/**
 * Counts consumed messages towards `n` from now: the times of the first and of the `n`th message
 * (`finished` resolves then) give a round's throughput.
 */
function arrivals(n: number) {
  const t0 = performance.now();
  let first = 0;
  let last = 0;
  let count = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  return {
    finished,
    /** `k` more messages consumed. */
    seen(k: number): void {
      if (count === 0) first = performance.now();
      count += k;
      if (count >= n && last === 0) {
        last = performance.now();
        finish();
      }
    },
    result(): Omit<RoundResult, "variant" | "round" | "cpuUsPerMsg"> {
      return { messages: count, seconds: (last - first) / 1000, wallSeconds: (last - t0) / 1000, perSec: count / ((last - first) / 1000) };
    },
  };
}

/** Consumes the whole topic with raw kafkajs eachBatch + no-op. */
async function consumeRaw(kafka: Kafka, topic: string, n: number, groupId: string): Promise<Omit<RoundResult, "variant" | "round" | "cpuUsPerMsg">> {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: MAX_WAIT_MS, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  const clock = arrivals(n);
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      partitionsConsumedConcurrently: CONCURRENT_PARTITIONS,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) void m; // the no-op handler, once per message
        clock.seen(batch.messages.length);
      },
    });
    await clock.finished;
  } finally {
    await consumer.disconnect();
  }
  return clock.result();
}

/** The Watermill message UUID of a record (the dedup key's last part). */
function uuidOf(headers: Record<string, unknown> | undefined): string {
  const h = headers?._watermill_message_uuid;
  return Buffer.isBuffer(h) ? h.toString("utf8") : String(h ?? "");
}

/**
 * A reference consumer with one Redis write per message: `floor` (eachBatch + one pipeline of
 * `SET key 1 NX PX ttl` per batch, awaited before the batch resolves) or `naive` (eachMessage +
 * an awaited `SET … PX … NX` per message, every partition at once).
 */
async function consumeRef(kind: "floor" | "naive", kafka: Kafka, redis: Redis, topic: string, n: number, groupId: string, prefix: string, partitions: number): Promise<Omit<RoundResult, "variant" | "round" | "cpuUsPerMsg">> {
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: MAX_WAIT_MS, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  const clock = arrivals(n);
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    if (kind === "floor") {
      await consumer.run({
        partitionsConsumedConcurrently: CONCURRENT_PARTITIONS,
        eachBatch: async ({ batch }) => {
          const p = redis.pipeline();
          for (const m of batch.messages) p.set(prefix + uuidOf(m.headers), "1", "PX", REF_TTL_MS, "NX");
          await p.exec();
          clock.seen(batch.messages.length);
        },
      });
    } else {
      await consumer.run({
        partitionsConsumedConcurrently: partitions,
        eachMessage: async ({ message }) => {
          await redis.set(prefix + uuidOf(message.headers), "1", "PX", REF_TTL_MS, "NX");
          clock.seen(1);
        },
      });
    }
    await clock.finished;
  } finally {
    await consumer.disconnect();
  }
  return clock.result();
}

/** Consumes the whole topic through KafkaSubscriber → Router → (default stack | nothing) → no-op. */
async function consumeOurs(
  brokers: string[],
  topic: string,
  n: number,
  groupId: string,
  opts: { repository: DedupRepository | null; service: string; chunk: number; commitIntervalMs: number; marking: Marking },
): Promise<Omit<RoundResult, "variant" | "round" | "cpuUsPerMsg">> {
  const router = new Router({ onError: (e) => console.error(`[bench] nack ${e.uuid ?? "batch"}: ${e.error.message}`) });
  const subscriber = new KafkaSubscriber({ brokers, groupId, chunkSize: opts.chunk, commitIntervalMs: opts.commitIntervalMs, partitionsConsumedConcurrently: CONCURRENT_PARTITIONS });
  const clock = arrivals(n);
  const middleware = opts.repository
    ? defaultStack({
        dlqPublisher: new FailingDlq(),
        dlqTopic: `${topic}.dlq`,
        dedup: { repository: opts.repository, service: opts.service, marking: opts.marking, registry: new Registry() },
      })
    : [];
  router.addHandler({
    name: "h",
    topic,
    subscriber,
    middleware,
    handler: async () => {
      clock.seen(1);
    },
  });
  const running = router.run();
  try {
    await Promise.race([clock.finished, running.then(() => Promise.reject(new Error("router stopped before the topic was consumed")))]);
  } finally {
    await router.close();
    await subscriber.close();
  }
  return clock.result();
}

/** Profiles `fn` with V8's CPU profiler (what `node --cpu-prof` uses), written to `path`. */
async function profiled<T>(path: string, fn: () => Promise<T>): Promise<T> {
  if (!path) return fn();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("Profiler.start");
  try {
    return await fn();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(path, JSON.stringify(profile));
    session.disconnect();
    console.log(`  cpu profile written to ${path} (summary: npm run bench:consumer -- --profile-top ${path})`);
  }
}

/** Redis server time: script and SET µs from `INFO commandstats`, and the server process' CPU seconds. */
async function redisCpu(r: Redis): Promise<{ scriptUsec: number; scriptCalls: number; cpuSec: number }> {
  const stats = await r.info("commandstats");
  let scriptUsec = 0;
  let scriptCalls = 0;
  for (const m of stats.matchAll(/^cmdstat_(evalsha|eval|set):calls=(\d+),usec=(\d+)/gm)) {
    scriptCalls += Number(m[2]);
    scriptUsec += Number(m[3]);
  }
  const cpu = await r.info("cpu");
  const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(cpu)?.[1] ?? 0);
  return { scriptUsec, scriptCalls, cpuSec: num("used_cpu_user") + num("used_cpu_sys") };
}

async function unlinkPrefix(client: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let n = 0;
  do {
    const [next, keys] = (await client.call("SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", 5000)) as [string, string[]];
    cursor = next;
    if (keys.length) n += Number(await client.call("UNLINK", ...keys));
  } while (cursor !== "0");
  return n;
}

/** CPU µs per message through Router.deliverBatch with `mk()` as middleware (median of 5 runs). */
async function stackCost(mk: () => Middleware[], n = 100_000, batch = 100): Promise<number> {
  const never = new AbortController().signal;
  const samples: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const router = new Router({ onError: () => undefined });
    router.addHandler({ name: "h", topic: "t", subscriber: new MemoryPubSub(), handler: async () => undefined, middleware: mk() });
    const sink = router.sink("h");
    const id = ulidSource();
    const msgs: Message[] = Array.from({ length: n }, () => ({ uuid: id(), metadata: { "Correlation-Id": "c" }, payload: Buffer.alloc(0), signal: never, context: {} }));
    const u0 = process.cpuUsage();
    for (let i = 0; i < n; i += batch) await sink.deliverBatch(msgs.slice(i, i + batch));
    const u = process.cpuUsage(u0);
    samples.push((u.user + u.system) / n);
  }
  return median(samples);
}

async function redisServerCpu(r: Redis): Promise<number> {
  const i = await r.info("cpu");
  const num = (k: string) => Number(new RegExp(`^${k}:([\\d.]+)`, "m").exec(i)?.[1] ?? 0);
  return num("used_cpu_user") + num("used_cpu_sys");
}

async function breakdown(jsonPath: string): Promise<void> {
  const rows: Array<Record<string, unknown>> = [];
  console.log(`bench:consumer --breakdown  node ${process.version}  loadavg ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  const dlq = new FailingDlq();
  const dedup = (metrics: boolean) => new Deduplicator({ repository: new MemoryRepository(), service: "s", registry: metrics ? new Registry() : undefined }).middleware;
  const steps: Array<[string, string, () => Middleware[]]> = [
    ["router", "Router.deliverBatch, no middleware", () => []],
    ["correlation_id", "+ correlationId", () => [correlationId()]],
    ["recoverer", "+ recoverer", () => [correlationId(), recoverer()]],
    ["poison_queue", "+ poisonQueue", () => [correlationId(), recoverer(), poisonQueue(dlq, "d")]],
    ["retry", "+ retry", () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry()]],
    ["deduplicator", "+ Deduplicator, in-memory store, no metrics", () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry(), dedup(false)]],
    ["metrics", "+ metrics (= defaultStack, in-memory store)", () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry(), dedup(true)]],
  ];
  console.log("1. in-process CPU µs per message (median of 5 × 100k, batches of 100):");
  let prev = 0;
  for (const [id, name, mk] of steps) {
    const us = await stackCost(mk);
    console.log(`   ${name.padEnd(48)} ${us.toFixed(2).padStart(6)} µs  (${prev ? `${us - prev >= 0 ? "+" : ""}${(us - prev).toFixed(2)}` : "base"})`);
    rows.push({ name: `consumer.stack_cpu_us.${id}`, value: +us.toFixed(3), unit: "us/msg", reference: prev ? +prev.toFixed(3) : null, ratio: prev ? +(us / prev).toFixed(4) : null, detail: { step: name, cumulative: true } });
    prev = us;
  }
  const srv = await startOwnRedis();
  const r = new Redis(srv.url);
  const N = 100_000;
  try {
    console.log(`2. Redis server CPU and client CPU per key, own redis-server (pid ${srv.pid}), ${N} keys, batches of 100:`);
    for (const mode of ["script", "pipeline"] as const) {
      await r.flushall();
      const repo = new RedisRepository(r, { batchCommand: mode, markCommand: mode });
      const pre = `bd${mode}:dedup:h:01JB8ZQ7K4X2M9V3N5T6W8Y0A`;
      // One token per batch, as the Deduplicator sends it (one value argument per script call).
      const token = (batchStart: number) => `processing:AbCdEf12${batchStart.toString(36)}`;
      let s0 = await redisServerCpu(r);
      let c0 = process.cpuUsage();
      for (let i = 0; i < N; i += 100) await repo.claimBatch(Array.from({ length: 100 }, (_, j) => ({ key: pre + (i + j), value: token(i), ttlMs: 60_000 })));
      let s1 = await redisServerCpu(r);
      let c1 = process.cpuUsage(c0);
      const claim = [((s1 - s0) * 1e6) / N, (c1.user + c1.system) / N];
      s0 = await redisServerCpu(r);
      c0 = process.cpuUsage();
      for (let i = 0; i < N; i += 100) await repo.compareAndSetBatch(Array.from({ length: 100 }, (_, j) => ({ key: pre + (i + j), expected: token(i), value: "done", ttlMs: 86_400_000 })));
      s1 = await redisServerCpu(r);
      c1 = process.cpuUsage(c0);
      const cas = [((s1 - s0) * 1e6) / N, (c1.user + c1.system) / N];
      // The unconditional done mark (SET … PX … GET) on freshly claimed keys, same transport, as the
      // Deduplicator sends it: naming the batch's lease token (`ours`), so the script answers only
      // the keys someone else held.
      for (let i = 0; i < N; i += 100) await repo.claimBatch(Array.from({ length: 100 }, (_, j) => ({ key: `${pre}m${i + j}`, value: token(i), ttlMs: 60_000 })));
      s0 = await redisServerCpu(r);
      c0 = process.cpuUsage();
      for (let i = 0; i < N; i += 100) await repo.markDoneBatch(Array.from({ length: 100 }, (_, j) => ({ key: `${pre}m${i + j}`, value: `done:bench.topic:3:${1_000_000 + i + j}#AbCdEfG`, ttlMs: 86_400_000, ours: token(i) })));
      s1 = await redisServerCpu(r);
      c1 = process.cpuUsage(c0);
      const mark = [((s1 - s0) * 1e6) / N, (c1.user + c1.system) / N];
      rows.push({ name: `consumer.redis_cpu_us_per_key.${mode}.done_set_get`, value: +mark[0]!.toFixed(3), unit: "us/key", reference: null, ratio: null, detail: { clientUs: +mark[1]!.toFixed(3) } });
      console.log(`   ${mode.padEnd(9)} done mark (unconditional SET … GET): Redis ${mark[0]!.toFixed(2)} µs, client ${mark[1]!.toFixed(2)} µs`);
      rows.push(
        { name: `consumer.redis_cpu_us_per_key.${mode}.claim`, value: +claim[0]!.toFixed(3), unit: "us/key", reference: null, ratio: null, detail: { clientUs: +claim[1]!.toFixed(3) } },
        { name: `consumer.redis_cpu_us_per_key.${mode}.done_mark`, value: +cas[0]!.toFixed(3), unit: "us/key", reference: null, ratio: null, detail: { clientUs: +cas[1]!.toFixed(3) } },
      );
      console.log(`   ${mode.padEnd(9)} claim: Redis ${claim[0]!.toFixed(2)} µs, client ${claim[1]!.toFixed(2)} µs   done mark (compare-and-set${mode === "pipeline" ? ", one EVALSHA per key" : ""}): Redis ${cas[0]!.toFixed(2)} µs, client ${cas[1]!.toFixed(2)} µs`);
    }
    await r.flushall();
    const s0 = await redisServerCpu(r);
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i += 100) {
      const p = r.pipeline();
      for (let j = 0; j < 100; j++) p.set(`bdplain:dedup:h:01JB8ZQ7K4X2M9V3N5T6W8Y0A${i + j}`, "done", "PX", 86_400_000);
      await p.exec();
    }
    const s1 = await redisServerCpu(r);
    const c1 = process.cpuUsage(c0);
    const plain = ((s1 - s0) * 1e6) / N;
    for (const row of rows) if (String(row.name).startsWith("consumer.redis_cpu")) Object.assign(row, { reference: +plain.toFixed(3), ratio: +((row.value as number) / plain).toFixed(4) });
    rows.push({ name: "consumer.redis_cpu_us_per_key.plain_set", value: +plain.toFixed(3), unit: "us/key", reference: null, ratio: null, detail: { clientUs: +((c1.user + c1.system) / N).toFixed(3) } });
    console.log(`   reference: pipelined plain SET PX (one write, no check): Redis ${(((s1 - s0) * 1e6) / N).toFixed(2)} µs, client ${((c1.user + c1.system) / N).toFixed(2)} µs`);
  } finally {
    r.disconnect();
    await srv.stop();
  }
  emitFigures(rows, jsonPath);
}

async function main(): Promise<void> {
  if (flag("breakdown")) return breakdown(arg("json", ""));
  const profileTop = arg("profile-top", "");
  if (profileTop) {
    console.log(summarizeProfile(profileTop, intArg("top", 30, 1, 500)));
    return;
  }
  const N = intArg("messages", 500_000, 1, 10_000_000);
  const PARTITIONS = intArg("partitions", 6, 1, 64);
  const ROUNDS = intArg("rounds", 3, 1, 20);
  const SIZE = intArg("size", 200, 120, 100_000);
  const CHUNK = intArg("chunk", 100, 1, 10_000);
  const COMMIT_MS = intArg("commit-interval", 0, 0, 600_000);
  const ROUND_TIMEOUT_S = intArg("round-timeout", 180, 5, 600);
  CONCURRENT_PARTITIONS = intArg("concurrency", 3, 1, 64);
  const brokers = arg("brokers", process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
  // --own-redis: a private redis-server (random port, stopped by pid), so that its CPU per message
  // is ours alone; by default the shared Redis, as a deployment would share it.
  const own = flag("own-redis") ? await startOwnRedis() : null;
  const redisUrl = own?.url ?? arg("redis", process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const jsonPath = arg("json", "");
  const profileDir = arg("profile", "");
  const variants = arg("variants", "raw,ours").split(",") as Variant[];
  for (const v of variants) if (!VARIANTS.includes(v)) throw new RangeError(`bench-consumer: --variants must list ${VARIANTS.join(", ")} (got ${v})`);

  const run = randomBytes(4).toString("hex");
  const topic = `bench-consumer-${run}`;
  const kafka = new Kafka({ clientId: `bench-consumer-${run}`, brokers, logLevel: logLevel.WARN, logCreator: kafkaLogCreator });
  const admin = kafka.admin();
  const redis = new Redis(redisUrl, { ...RECOMMENDED_IOREDIS_OPTIONS });
  // The references' client: ioredis defaults, as the seed's snippet creates it.
  const plainRedis = new Redis(redisUrl);
  const groups: string[] = [];
  const prefixes: string[] = [];
  const results: RoundResult[] = [];
  const profiles = new Map<Variant, ProfileSplit>();
  const redisPerMsg: Array<{ execUs: number; cpuUs: number; calls: number }> = [];
  const load0 = loadavg();
  console.log(`bench:consumer  messages=${N} partitions=${PARTITIONS} rounds=${ROUNDS} size≈${SIZE}B variants=${variants.join(",")} chunk=${CHUNK} commitIntervalMs=${COMMIT_MS} partitionsConsumedConcurrently=${CONCURRENT_PARTITIONS}`);
  console.log(`  brokers=${brokers.join(",")} redis=${new URL(redisUrl).host} node ${process.version} ${new Date().toISOString()} loadavg ${load0.map((x) => x.toFixed(2)).join(" ")}`);
  await admin.connect();
  try {
    await createTopicsReady(admin, [{ name: topic, partitions: PARTITIONS }]);
    const tf = performance.now();
    const avg = await bounded(fillTopic(kafka, topic, N, PARTITIONS, SIZE), 300_000, "filling the topic");
    console.log(`  filled ${topic}: ${fmt(N)} records, payload ≈ ${avg.toFixed(0)} B, in ${((performance.now() - tf) / 1000).toFixed(1)} s`);

    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate the order so that neither variant always runs on a warmer (or busier) machine.
      const order = round % 2 === 1 ? variants : [...variants].reverse();
      for (const variant of order) {
        const groupId = `bench-consumer-${run}-${variant}-${round}`;
        groups.push(groupId);
        const service = `benchc${run}r${round}`;
        const usesRedis = OURS_ON_REDIS.includes(variant) || variant === "floor" || variant === "naive";
        if (usesRedis) prefixes.push(`${service}:`);
        const consume = () =>
          variant === "raw"
            ? consumeRaw(kafka, topic, N, groupId)
            : variant === "floor" || variant === "naive"
              ? consumeRef(variant, kafka, plainRedis, topic, N, groupId, `${service}:dedup:h:`, PARTITIONS)
              : consumeOurs(brokers, topic, N, groupId, {
                repository:
                  variant === "cas"
                    ? casOnly(new RedisRepository(redis))
                    : variant === "pipe"
                      ? new RedisRepository(redis, { markCommand: "pipeline" })
                      : OURS_ON_REDIS.includes(variant)
                        ? new RedisRepository(redis)
                        : variant === "mem"
                          ? new MemoryRepository()
                          : null,
                marking: variant === "rel" ? "release" : "lease",
                service,
                chunk: CHUNK,
                commitIntervalMs: COMMIT_MS,
              });
        const cpu0 = usesRedis ? await redisCpu(redis) : null;
        let redisCpuUs = 0;
        let redisCmdUs = 0;
        const profPath = profileDir && round === ROUNDS ? `${profileDir}/${variant}-r${round}.cpuprofile` : "";
        const c0 = process.cpuUsage();
        const r0 = await bounded(profiled(profPath, consume), ROUND_TIMEOUT_S * 1000, `${variant} round ${round}`);
        const c1 = process.cpuUsage(c0);
        const r = { ...r0, cpuUsPerMsg: (c1.user + c1.system) / r0.messages };
        if (profPath) profiles.set(variant, analyzeProfile(profPath, 15));
        if (r.messages < N) throw new Error(`${variant} round ${round} consumed ${r.messages} < ${N}`);
        const res = { variant, round, ...r };
        results.push(res);
        let extra = "";
        if (usesRedis) {
          const cpu1 = await redisCpu(redis);
          const keys = await unlinkPrefix(redis, `${service}:`);
          const execUs = ((cpu1.scriptUsec - cpu0!.scriptUsec) / N).toFixed(2);
          const cpuUs = ((1e6 * (cpu1.cpuSec - cpu0!.cpuSec)) / N).toFixed(2);
          redisCpuUs = Number(cpuUs);
          redisCmdUs = Number(execUs);
          if (variant === "ours") redisPerMsg.push({ execUs: Number(execUs), cpuUs: Number(cpuUs), calls: cpu1.scriptCalls - cpu0!.scriptCalls });
          extra = `  (${fmt(keys)} dedup keys written, deleted; Redis per msg: ${execUs} µs in EVALSHA/EVAL/SET, ${cpuUs} µs server CPU${own ? ", own server" : " — shared server: includes others' load"})`;
          if (keys < N) throw new Error(`${variant} round ${round}: only ${keys} dedup keys for ${N} messages`);
        }
        res.cpuUsPerMsg += redisCpuUs;
        res.redisCpuUsPerMsg = redisCpuUs;
        res.redisCmdUsPerMsg = redisCmdUs;
        console.log(
          `  round ${round} ${variant.padEnd(4)} ${fmt(res.perSec).padStart(9)} msgs/s  (${res.seconds.toFixed(2)} s first→last, ${res.wallSeconds.toFixed(2)} s with join)` +
            `  CPU ${res.cpuUsPerMsg.toFixed(2)} µs/msg${redisCpuUs ? " (incl. Redis server)" : ""}${extra}  load ${loadavg()[0]!.toFixed(2)}`,
        );
      }
    }
  } finally {
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 }).catch((e: unknown) => console.error(`could not delete topic ${topic}: ${String(e)}`));
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    for (const p of prefixes) await unlinkPrefix(redis, p).catch(() => 0);
    await redis.quit();
    await plainRedis.quit();
    await own?.stop();
  }

  const med = (v: Variant) => median(results.filter((r) => r.variant === v).map((r) => r.perSec));
  const medCpu = (v: Variant) => median(results.filter((r) => r.variant === v).map((r) => r.cpuUsPerMsg));
  const load1 = loadavg();
  console.log(`\nmedian msgs/s over ${ROUNDS} round(s): ${variants.map((v) => `${v} ${fmt(med(v))}`).join("   ")}`);
  console.log(`median CPU µs per message (this process${variants.includes("ours") ? "; ours + Redis server CPU" : ""}): ${variants.map((v) => `${v} ${medCpu(v).toFixed(2)}`).join("   ")}`);
  const out: Array<Record<string, unknown>> = [];
  if (variants.includes("raw")) {
    for (const v of variants.filter((x) => x !== "raw")) {
      const perRound = results.filter((r) => r.variant === v).map((r) => r.perSec / results.find((x) => x.variant === "raw" && x.round === r.round)!.perSec);
      const ratio = med(v) / med("raw");
      console.log(`ratio ${v}/raw = ${ratio.toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(", ")})${v === "ours" ? `   goal ≥ 0.5: ${ratio >= 0.5 ? "met" : `MISSED by ${(0.5 - ratio).toFixed(3)}`}` : ""}`);
      out.push({
        name:
          v === "ours"
            ? "consumer.with_dedup_vs_raw_kafkajs"
            : v === "sub"
              ? "consumer.subscriber_only_vs_raw_kafkajs"
              : v === "rel"
                ? "consumer.with_dedup_release_marking_vs_raw_kafkajs"
                : v === "cas" || v === "pipe"
                  ? `consumer.with_dedup_${v === "cas" ? "cas_done_mark" : "pipelined_done_mark"}_vs_raw_kafkajs`
                  : v === "floor"
                  ? "consumer.floor_vs_raw_kafkajs"
                  : v === "naive"
                    ? "consumer.naive_peer_vs_raw_kafkajs"
                    : "consumer.stack_memory_store_vs_raw_kafkajs",
        value: +ratio.toFixed(4),
        unit: "ratio",
        reference: +med("raw").toFixed(0),
        ratio: +ratio.toFixed(4),
        target: v === "ours" ? 0.5 : undefined,
        detail: { perRound: perRound.map((x) => +x.toFixed(4)) },
      });
    }
  }
  // Ours against the two Redis-backed references of the same run (issue 15): medians, and per round.
  for (const [ref, name, goal] of [
    ["floor", "consumer.with_dedup_vs_floor", 0.8],
    ["naive", "consumer.with_dedup_vs_naive_peer", 4],
  ] as const) {
    if (!variants.includes("ours") || !variants.includes(ref)) continue;
    const perRound = results.filter((r) => r.variant === "ours").map((r) => r.perSec / results.find((x) => x.variant === ref && x.round === r.round)!.perSec);
    const ratio = med("ours") / med(ref);
    console.log(`ratio ours/${ref} = ${ratio.toFixed(3)} (per round ${perRound.map((x) => x.toFixed(3)).join(", ")})   goal ≥ ${goal}: ${ratio >= goal ? "met" : `MISSED by ${(goal - ratio).toFixed(3)}`}`);
    out.push({ name, value: +ratio.toFixed(4), unit: "ratio", reference: +med(ref).toFixed(0), ratio: +ratio.toFixed(4), target: goal, detail: { perRound: perRound.map((x) => +x.toFixed(4)), referenceCpuUsPerMsg: +medCpu(ref).toFixed(2), oursCpuUsPerMsg: +medCpu("ours").toFixed(2) } });
  }
  for (const v of variants) {
    out.push({
      name: `consumer.msgs_per_sec.${v}`,
      value: +med(v).toFixed(0),
      unit: "msgs/s",
      reference: variants.includes("raw") ? +med("raw").toFixed(0) : null,
      ratio: variants.includes("raw") ? +(med(v) / med("raw")).toFixed(4) : null,
      detail: {
        rounds: results.filter((r) => r.variant === v).map((r) => Math.round(r.perSec)),
        cpuUsPerMsg: +medCpu(v).toFixed(2),
        redisCpuUsPerMsg: +median(results.filter((r) => r.variant === v).map((r) => r.redisCpuUsPerMsg ?? 0)).toFixed(2),
        redisCmdUsPerMsg: +median(results.filter((r) => r.variant === v).map((r) => r.redisCmdUsPerMsg ?? 0)).toFixed(2), profile: profiles.get(v), redisPerMsg: v === "ours" ? redisPerMsg : undefined },
    });
  }
  // The per-message CPU budget of this run (medians; process CPU, Redis server CPU apart): each
  // variant adds one layer to the one before, so the differences split the full path.
  const has = (...vs: Variant[]) => vs.every((v) => variants.includes(v));
  if (has("raw", "sub", "mem", "ours")) {
    const redisOf = (v: Variant) => median(results.filter((r) => r.variant === v).map((r) => r.redisCpuUsPerMsg ?? 0));
    const nodeOf = (v: Variant) => medCpu(v) - redisOf(v);
    const parts: Array<[string, string, number]> = [
      ["kafkajs", "kafkajs fetch + decode + eachBatch (raw)", nodeOf("raw")],
      ["transport", "KafkaSubscriber, Watermill decode, Router delivery, commits (sub − raw)", nodeOf("sub") - nodeOf("raw")],
      ["stack", "default stack + Deduplicator + metrics, in-memory store (mem − sub; split by --breakdown)", nodeOf("mem") - nodeOf("sub")],
      ["redis_client", "ioredis encode/decode + RedisRepository instead of the in-memory store (ours − mem, node only)", nodeOf("ours") - nodeOf("mem")],
      ["redis_server", "Redis server CPU (INFO cpu delta; shared server: others' load included)", redisOf("ours")],
    ];
    console.log("per-message CPU budget of ours (µs, medians of this run):");
    for (const [id, what, us] of parts) {
      console.log(`  ${us.toFixed(2).padStart(7)}  ${what}`);
      out.push({ name: `consumer.cpu_budget_us_per_msg.${id}`, value: +us.toFixed(3), unit: "us/msg", reference: +medCpu("ours").toFixed(3), ratio: +(us / medCpu("ours")).toFixed(4), detail: { what } });
    }
    if (has("floor")) console.log(`  floor for comparison: ${nodeOf("floor").toFixed(2)} µs node + ${redisOf("floor").toFixed(2)} µs Redis server per message`);
  }
  out.push({ name: "consumer.loadavg_1m", value: +((load0[0]! + load1[0]!) / 2).toFixed(2), unit: "load", reference: null, ratio: null, detail: { start: load0, end: load1 } });
  for (const [v, p] of profiles) {
    console.log(`profile ${v} (last round, ${p.sampledSeconds.toFixed(1)} s): ${Object.entries(p.areas).slice(0, 7).map(([a, f]) => `${a} ${(100 * f).toFixed(1)}%`).join(", ")}`);
  }
  console.log(`loadavg start ${load0.map((x) => x.toFixed(2)).join(" ")}  end ${load1.map((x) => x.toFixed(2)).join(" ")}`);
  emitFigures(out, jsonPath);
}

runMain(main);
