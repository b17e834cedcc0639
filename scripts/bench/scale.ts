/**
 * `npm run bench:scale` — what scaling out buys on this machine (issue 10), in one run:
 *
 * 1. Batch claims/s: `RedisRepository.claimBatch` on the standalone server (REDIS_URL, default
 *    127.0.0.1:6379; both its batch modes: one script call per batch, and one pipeline) against the
 *    3-master Redis Cluster (REDIS_CLUSTER_NODES, default 127.0.0.1:7000-7002: one pipeline per
 *    master per batch), alternating, for `--claim-seconds` each, at 1 and `--concurrency` batches
 *    in flight. Every claim is a new key under a random prefix (TTL 2 min, deleted after).
 * 2. Consumer messages/s with 1, 2 and 3 worker processes in ONE consumer group on a fresh
 *    6-partition topic: each worker is this script in `--worker` mode (the library's KafkaSubscriber
 *    → Router → defaultStack with the Deduplicator on Redis → a no-op handler). The workers join
 *    while the topic is empty (so no rebalance falls inside the measurement), the topic is then
 *    filled with `--messages` Watermill-format records while every worker waits at a gate, and the
 *    gate opens for all at once. messages/s = messages / (last message processed − gate opened).
 *    `--rounds` repeats 1,2,3 then 3,2,1… and the summary takes medians. Also printed: how busy the
 *    machine's cores were (/proc/stat), and the CPU each message cost in the workers and in the
 *    stack's own processes (Kafka broker, Redis masters: /proc/<pid>/stat of the pids
 *    scripts/stack.sh recorded), hence the 2-core ceiling = 2000 ms / (CPU ms per message): the
 *    rate at which the two cores are saturated, i.e. where adding workers bends.
 *
 *   npm run bench:scale -- [--json out.json] [--claim-seconds 3] [--batch 100] [--concurrency 4]
 *     [--messages 30000] [--workers 1,2,3] [--rounds 2] [--consumer-redis cluster|standalone]
 *     [--skip claims|consumers]
 *
 * Needs `npm run stack:up` (Redis, Kafka) and `npm run stack:cluster`. Deletes its topic, groups
 * and keys. Every worker process is stopped by its pid.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { Cluster, Redis } from "ioredis";
import { Kafka, logLevel, Partitioners } from "kafkajs";
import { Registry } from "prom-client";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { encodeRecord } from "@/server/transport/watermill-codec";
import {
  type Message,
  type Publisher,
  RECOMMENDED_IOREDIS_OPTIONS,
  RedisRepository,
  type DedupRedisClient,
  type RedisRepositoryOptions,
  Router,
  defaultStack,
} from "@/server/dedup";
import { ConsumerGroupDescriber } from "@/server/observe/kafka/consumer-group";
import { clusterClient as seededCluster, deletePrefix } from "@/server/testing/redis-cluster";
import { createTopicsReady } from "@/server/transport/topics";
import { arg, flag, intArg } from "../lib/args";
import { median, percentile } from "../lib/stats";

// ---------------------------------------------------------------------------------------------
// Arguments

const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",").map((s) => s.trim());
const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const CLUSTER_NODES = (process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002")
  .split(",")
  .map((s) => s.trim());
const PARTITIONS = 6;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function clusterClient(): Cluster {
  return seededCluster(
    {
      enableAutoPipelining: RECOMMENDED_IOREDIS_OPTIONS.enableAutoPipelining,
      redisOptions: {
        maxRetriesPerRequest: RECOMMENDED_IOREDIS_OPTIONS.maxRetriesPerRequest,
        connectTimeout: RECOMMENDED_IOREDIS_OPTIONS.connectTimeout,
      },
    },
    CLUSTER_NODES,
  );
}
function standaloneClient(): Redis {
  const r = new Redis(REDIS_URL, RECOMMENDED_IOREDIS_OPTIONS);
  r.on("error", () => {});
  return r;
}

async function ready(c: Redis | Cluster, what: string): Promise<void> {
  if (c.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(
      () =>
        reject(
          new Error(`${what} not ready after 5 s (status ${c.status}): run npm run stack:up / npm run stack:cluster`),
        ),
      5000,
    );
    c.once("ready", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** Busy fraction of all cores between two /proc/stat readings. */
function cpuTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (line[3] ?? 0) + (line[4] ?? 0);
  const total = line.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Processes of the stack this bench leans on (from scripts/stack.sh's pid files), by name. */
function servicePids(names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of names) {
    try {
      const pid = Number(readFileSync(`.stack/pids/${n}.pid`, "utf8").trim());
      if (pid > 0) out.set(n, pid);
    } catch {
      // not started by scripts/stack.sh (e.g. a system redis-server): not measured
    }
  }
  return out;
}

/** CPU time (ms) a process used so far, from /proc/<pid>/stat (utime + stime, 100 ticks/s). */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Batch claims

interface ClaimFigures {
  target: string;
  concurrency: number;
  /** Requests sent per batch (pipelines + single calls): the round trips a batch costs. */
  roundTripsPerBatch: number;
  claimsPerSecond: number;
  batchP50Ms: number;
  batchP99Ms: number;
}

/** The client behind the repository's narrow interface, counting requests (a pipeline is one round trip). */
function counted(c: Redis | Cluster): { client: DedupRedisClient; trips: { n: number } } {
  const trips = { n: 0 };
  const client: DedupRedisClient = {
    isCluster: c instanceof Cluster,
    get slots() {
      return c instanceof Cluster ? c.slots : undefined;
    },
    call: (command, ...args) => {
      trips.n++;
      return c.call(command, ...args);
    },
    pipeline: () => {
      const p = c.pipeline();
      return {
        call: (command: string, ...args: Array<string | number>) => p.call(command, ...args),
        exec: () => {
          trips.n++;
          return p.exec();
        },
      };
    },
  };
  return { client, trips };
}

async function claimRun(
  c: Redis | Cluster,
  opts: RedisRepositoryOptions,
  prefix: string,
  seconds: number,
  batch: number,
  concurrency: number,
  target: string,
): Promise<ClaimFigures> {
  const { client, trips } = counted(c);
  const repo = new RedisRepository(client, opts);
  let batches = 0;
  const lat: number[] = [];
  let claims = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const reqs = Array.from({ length: batch }, () => ({
          key: `${prefix}:${(next++).toString(36)}`,
          value: "processing:bench",
          ttlMs: 120_000,
        }));
        const t0 = performance.now();
        const out = await repo.claimBatch(reqs);
        lat.push(performance.now() - t0);
        batches++;
        const failed = out.find((r) => r instanceof Error);
        if (failed) throw failed;
        claims += batch;
      }
    }),
  );
  const q = (p: number) => Math.round((percentile(lat, p) || 0) * 100) / 100;
  return {
    target,
    concurrency,
    roundTripsPerBatch: Math.round((trips.n / Math.max(1, batches)) * 100) / 100,
    claimsPerSecond: Math.round(claims / seconds),
    batchP50Ms: q(50),
    batchP99Ms: q(99),
  };
}

async function benchClaims(): Promise<ClaimFigures[]> {
  const seconds = intArg("claim-seconds", 3, 1, 60);
  const batch = intArg("batch", 100, 1, 5000);
  const concurrency = intArg("concurrency", 4, 1, 64);
  const standalone = standaloneClient();
  const cluster = clusterClient();
  await Promise.all([
    ready(standalone, `Redis ${REDIS_URL}`),
    ready(cluster, `Redis Cluster ${CLUSTER_NODES.join(",")}`),
  ]);
  const prefix = `bench-scale-${randomBytes(4).toString("hex")}:dedup:claims`;
  const targets: Array<{ name: string; client: Redis | Cluster; opts: RedisRepositoryOptions }> = [
    { name: "standalone (script per batch)", client: standalone, opts: { batchCommand: "script" } },
    { name: "standalone (pipeline per batch)", client: standalone, opts: { batchCommand: "pipeline" } },
    { name: "cluster, 3 masters (pipeline per master)", client: cluster, opts: {} },
  ];
  const out: ClaimFigures[] = [];
  try {
    // Warm-up: connections, scripts loaded on every node, JIT.
    for (const t of targets) await claimRun(t.client, t.opts, `${prefix}:w`, 0.3, batch, concurrency, t.name);
    for (const c of [1, concurrency]) {
      for (const t of targets) {
        const f = await claimRun(t.client, t.opts, `${prefix}:${out.length}`, seconds, batch, c, t.name);
        out.push(f);
        console.log(
          `[claims] ${t.name.padEnd(42)} ${c} in flight: ${f.claimsPerSecond.toLocaleString("en")} claims/s, ${f.roundTripsPerBatch} round trip(s) per batch of ${batch}, p50 ${f.batchP50Ms} ms p99 ${f.batchP99Ms} ms`,
        );
      }
    }
  } finally {
    await deletePrefix(standalone, prefix);
    await deletePrefix(cluster, prefix);
    standalone.disconnect();
    cluster.disconnect();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 2. Consumer workers

/** Worker mode: joins the group, waits for "go" on stdin, processes, reports on "stop" (or SIGTERM). */
async function worker(): Promise<void> {
  const topic = arg("topic", "");
  const group = arg("group", "");
  const replica = arg("replica", `w-${process.pid}`);
  const service = arg("service", "bench");
  const redisKind = arg("redis", "cluster");
  if (!topic || !group) throw new RangeError("bench-scale --worker: --topic and --group are required");
  const say = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ replica, ...o })}\n`);
  const redis = redisKind === "standalone" ? standaloneClient() : clusterClient();
  await ready(redis, redisKind);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let gatedAt = 0;
  let processed = 0;
  let first = 0;
  let last = 0;
  let cpu0 = process.cpuUsage();
  const partitions = new Set<number>();
  const noDlq: Publisher = { publish: async () => undefined, close: async () => undefined };
  const subscriber = new KafkaSubscriber({
    brokers: BROKERS,
    groupId: group,
    replica,
    sessionTimeoutMs: 30_000,
    logLevel: logLevel.ERROR,
  });
  const router = new Router({ onError: (e) => say({ event: "error", detail: e.error.message }) });
  router.addHandler({
    name: "bench",
    topic,
    subscriber,
    middleware: defaultStack({
      dlqPublisher: noDlq,
      dlqTopic: `${topic}.dlq`,
      dedup: { repository: new RedisRepository(redis), service, registry: new Registry() },
    }),
    handler: async (m: Message) => {
      if (!gatedAt) await gate;
      const now = Date.now();
      if (!first) first = now;
      last = now;
      processed++;
      if (m.context.partition !== undefined) partitions.add(m.context.partition);
    },
  });
  const stop = async () => {
    const cpu = process.cpuUsage(cpu0);
    say({
      event: "report",
      processed,
      first,
      last,
      gatedAt,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      partitions: [...partitions].sort((a, b) => a - b),
    });
    await router.close();
    await subscriber.close();
    redis.disconnect();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line.trim() === "go") {
      gatedAt = Date.now();
      cpu0 = process.cpuUsage();
      open();
    } else if (line.trim() === "stop") void stop();
  });
  void router.run();
  await router.running;
  say({ event: "joined", assignment: subscriber.assignment.get(topic) ?? [] });
}

interface WorkerHandle {
  child: ChildProcessWithoutNullStreams;
  replica: string;
  reports: Array<Record<string, unknown>>;
  joined: Promise<void>;
  report: Promise<Record<string, unknown>>;
}

/** Starts one worker process (node + tsx loader, so its pid is the worker itself). */
export function startWorker(opts: {
  topic: string;
  group: string;
  replica: string;
  service: string;
  redis: string;
}): WorkerHandle {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      __filename,
      "--worker",
      "--topic",
      opts.topic,
      "--group",
      opts.group,
      "--replica",
      opts.replica,
      "--service",
      opts.service,
      "--redis",
      opts.redis,
    ],
    { stdio: ["pipe", "pipe", "pipe"], cwd: process.cwd(), env: process.env },
  );
  const reports: Array<Record<string, unknown>> = [];
  let joined!: () => void;
  let reported!: (r: Record<string, unknown>) => void;
  let failed!: (e: Error) => void;
  const j = new Promise<void>((res, rej) => {
    joined = res;
    failed = rej;
  });
  const r = new Promise<Record<string, unknown>>((res) => (reported = res));
  j.catch(() => undefined);
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      reports.push(o);
      if (o.event === "joined") joined();
      if (o.event === "report") reported(o);
    } catch {
      // not ours (a library log line)
    }
  });
  child.on("exit", (code) =>
    failed(new Error(`worker ${opts.replica} exited (${code}) before joining: ${stderr.slice(-600)}`)),
  );
  return { child, replica: opts.replica, reports, joined: j, report: r };
}

/** Stops a worker by its pid: "stop" on stdin, then SIGTERM, then SIGKILL. */
export async function stopWorker(w: WorkerHandle, timeoutMs = 15_000): Promise<Record<string, unknown> | null> {
  if (w.child.exitCode !== null) return null;
  const exited = new Promise<void>((r) => w.child.once("exit", () => r()));
  w.child.stdin.write("stop\n");
  const report = await Promise.race([w.report, sleep(timeoutMs).then(() => null)]);
  const t = setTimeout(() => {
    if (w.child.exitCode === null && w.child.pid) process.kill(w.child.pid, "SIGKILL");
  }, 5000);
  if (w.child.exitCode === null && w.child.pid && report === null) process.kill(w.child.pid, "SIGTERM");
  await exited;
  clearTimeout(t);
  return report;
}

interface ConsumerFigures {
  workers: number;
  round: number;
  messages: number;
  messagesPerSecond: number;
  windowMs: number;
  /** CPU per message: all workers together, and the stack's services (Kafka broker, Redis) by name. */
  cpuMsPerMessage: { workers: number; services: Record<string, number> };
  /** Messages/s the 2 cores could carry if only this pipeline ran: 2000 ms / (CPU ms per message). */
  twoCoreCeiling: number;
  perWorker: Array<{ replica: string; processed: number; partitions: number[]; cpuMs: number; cpuShare: number }>;
  machineBusy: number;
  assignmentsDisjointAndComplete: boolean;
}

async function fillTopic(kafka: Kafka, topic: string, n: number): Promise<void> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    const ts = Date.now().toString(36).toUpperCase().padStart(10, "0");
    for (let start = 0; start < n; start += 2000) {
      const messages = [];
      for (let i = start; i < Math.min(n, start + 2000); i++) {
        const payload = Buffer.from(JSON.stringify({ type: "order.created", order: `o-${i}`, amount: i % 997 }));
        const rec = encodeRecord({
          uuid: `${ts}${randomBytes(8).toString("hex").toUpperCase().slice(0, 16)}`,
          metadata: { "Event-Type": "order.created" },
          payload,
        });
        messages.push({ value: rec.value, headers: rec.headers, partition: i % PARTITIONS });
      }
      await producer.sendBatch({ acks: 1, topicMessages: [{ topic, messages }] });
    }
  } finally {
    await producer.disconnect();
  }
}

async function benchConsumers(): Promise<ConsumerFigures[]> {
  const messages = intArg("messages", 30_000, 600, 2_000_000);
  const rounds = intArg("rounds", 2, 1, 10);
  const once = arg("workers", "1,2,3").split(",").map(Number);
  // Alternate the order (1,2,3 then 3,2,1…) so that a drift in the machine's load falls on all alike.
  const plan = Array.from({ length: rounds }, (_, r) =>
    (r % 2 === 0 ? once : [...once].reverse()).map((k) => ({ k, round: r + 1 })),
  ).flat();
  const counts = once;
  if (!counts.every((k) => Number.isInteger(k) && k >= 1 && k <= PARTITIONS))
    throw new RangeError(`bench-scale: --workers must list integers in [1, ${PARTITIONS}]`);
  const redisKind = arg("consumer-redis", "cluster");
  if (!["cluster", "standalone"].includes(redisKind))
    throw new RangeError("bench-scale: --consumer-redis must be cluster or standalone");
  const kafka = new Kafka({ clientId: "bench-scale", brokers: BROKERS, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const tag = randomBytes(4).toString("hex");
  const service = `bench-scale-${tag}`;
  const describer = new ConsumerGroupDescriber(admin, { requestTimeoutMs: 5000 });
  const out: ConsumerFigures[] = [];
  const topics: string[] = [];
  const groups: string[] = [];
  const redis = redisKind === "standalone" ? standaloneClient() : clusterClient();
  try {
    await ready(redis, redisKind);
    const services = servicePids(
      redisKind === "cluster" ? ["kafka", "redis-7000", "redis-7001", "redis-7002"] : ["kafka", "redis"],
    );
    for (const { k, round } of plan) {
      const topic = `bench-scale-${tag}-w${k}-r${round}`;
      const group = topic;
      topics.push(topic);
      groups.push(group);
      await createTopicsReady(admin, [{ name: topic, partitions: PARTITIONS }]);
      const workers = Array.from({ length: k }, (_, i) =>
        startWorker({ topic, group, replica: `w${k}-${i + 1}`, service, redis: redisKind }),
      );
      try {
        await Promise.all(
          workers.map((w) =>
            Promise.race([
              w.joined,
              sleep(90_000).then(() => Promise.reject(new Error(`${w.replica} did not join in 90 s`))),
            ]),
          ),
        );
        // Wait for ONE stable generation holding all k workers, before any message exists.
        let view = null;
        for (let i = 0; i < 120; i++) {
          const r = await describer.describe({ topic, group });
          view = r.groups[0];
          if (view && view.state === "Stable" && view.members.length === k && view.unassigned.length === 0) break;
          await sleep(250);
        }
        if (!view || view.members.length !== k || view.unassigned.length > 0)
          throw new Error(`group ${group} did not settle with ${k} members: ${JSON.stringify(view)}`);
        const held = view.members.flatMap((m) => m.partitions);
        const disjoint =
          held.length === new Set(held).size && new Set(held).size === PARTITIONS && view.overlapping.length === 0;
        await fillTopic(kafka, topic, messages);
        const c0 = cpuTicks();
        const s0 = new Map([...services].map(([n, pid]) => [n, processCpuMs(pid)]));
        const gateOpened = Date.now();
        for (const w of workers) w.child.stdin.write("go\n");
        // Done when the group committed every message.
        const deadline = Date.now() + 300_000;
        for (;;) {
          const r = await describer.describe({ topic, group });
          const g = r.groups[0];
          if (g && g.totalLag === 0 && g.partitions.every((p) => p.committedOffset !== null)) break;
          if (Date.now() > deadline)
            throw new Error(`workers did not finish ${messages} messages in 300 s (lag ${g?.totalLag})`);
          await sleep(100);
        }
        const c1 = cpuTicks();
        const serviceMs = Object.fromEntries(
          [...services].map(([n, pid]) => [
            n,
            Math.round(((processCpuMs(pid) - (s0.get(n) ?? 0)) / messages) * 1000) / 1000,
          ]),
        );
        const reports = (await Promise.all(workers.map((w) => stopWorker(w)))).filter(
          (r): r is Record<string, unknown> => r !== null,
        );
        const lastAt = Math.max(...reports.map((r) => Number(r.last) || 0));
        const windowMs = Math.max(1, lastAt - gateOpened);
        const perWorker = reports.map((r) => ({
          replica: String(r.replica),
          processed: Number(r.processed),
          partitions: (r.partitions as number[]) ?? [],
          cpuMs: Number(r.cpuMs),
          cpuShare: Math.round((Number(r.cpuMs) / windowMs) * 100) / 100,
        }));
        const workerMsPerMsg = Math.round((perWorker.reduce((a, w) => a + w.cpuMs, 0) / messages) * 1000) / 1000;
        const totalMsPerMsg = workerMsPerMsg + Object.values(serviceMs).reduce((a, b) => a + b, 0);
        const f: ConsumerFigures = {
          workers: k,
          round,
          messages,
          cpuMsPerMessage: { workers: workerMsPerMsg, services: serviceMs },
          twoCoreCeiling: totalMsPerMsg > 0 ? Math.round(2000 / totalMsPerMsg) : 0,
          messagesPerSecond: Math.round((messages / windowMs) * 1000),
          windowMs,
          perWorker,
          machineBusy: Math.round(((c1.busy - c0.busy) / Math.max(1, c1.total - c0.total)) * 100) / 100,
          assignmentsDisjointAndComplete: disjoint,
        };
        out.push(f);
        console.log(
          `[consumers] round ${round}, ${k} worker(s): ${f.messagesPerSecond.toLocaleString("en")} msg/s (${messages} in ${windowMs} ms); ` +
            `cores busy ${(f.machineBusy * 100).toFixed(0)}% of 2 (load ${loadavg()[0]!.toFixed(1)}); CPU per message: workers ${workerMsPerMsg} ms, ` +
            `${Object.entries(serviceMs)
              .map(([n, v]) => `${n} ${v} ms`)
              .join(
                ", ",
              )} → 2-core ceiling ≈ ${f.twoCoreCeiling.toLocaleString("en")} msg/s; per worker ${perWorker.map((w) => `${w.replica} p[${w.partitions.join(",")}] ${w.processed} msgs, CPU ${(w.cpuShare * 100).toFixed(0)}%`).join("; ")}; ` +
            `assignment disjoint and complete: ${disjoint}`,
        );
      } finally {
        await Promise.all(workers.map((w) => stopWorker(w, 5000).catch(() => null)));
      }
    }
  } finally {
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.deleteGroups(groups).catch(() => undefined);
    await admin.disconnect();
    await deletePrefix(redis, `${service}:`).catch(() => 0);
    redis.disconnect();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

/** Medians per worker count over the rounds. */
function consumerSummary(all: readonly ConsumerFigures[]) {
  const ks = [...new Set(all.map((f) => f.workers))].sort((a, b) => a - b);
  return ks.map((k) => {
    const fs = all.filter((f) => f.workers === k);
    return {
      workers: k,
      rounds: fs.length,
      messagesPerSecond: Math.round(median(fs.map((f) => f.messagesPerSecond))),
      machineBusy: median(fs.map((f) => f.machineBusy)),
      workerCpuMsPerMessage: median(fs.map((f) => f.cpuMsPerMessage.workers)),
      twoCoreCeiling: Math.round(median(fs.map((f) => f.twoCoreCeiling))),
    };
  });
}

async function main(): Promise<void> {
  if (flag("worker")) return worker();
  const skip = arg("skip", "");
  const json = arg("json", "");
  const load0 = loadavg()[0]!;
  const claims = skip === "claims" ? [] : await benchClaims();
  const consumers = skip === "consumers" ? [] : await benchConsumers();
  if (claims.length) {
    const by = (name: string, c: number) =>
      claims.find((f) => f.target.startsWith(name) && f.concurrency === c)?.claimsPerSecond ?? 0;
    const cMax = Math.max(...claims.map((f) => f.concurrency));
    for (const c of [...new Set([1, cMax])]) {
      console.log(
        `[claims] cluster / standalone-script at ${c} in flight: ${(by("cluster", c) / Math.max(1, by("standalone (script", c))).toFixed(2)}; cluster / standalone-pipeline: ${(by("cluster", c) / Math.max(1, by("standalone (pipeline", c))).toFixed(2)}`,
      );
    }
  }
  const summary = consumerSummary(consumers);
  if (summary.length > 1) {
    const base = summary[0]!;
    for (const f of summary) {
      const speedup = f.messagesPerSecond / Math.max(1, base.messagesPerSecond);
      console.log(
        `[consumers] median of ${f.rounds} round(s), ${f.workers} worker(s): ${f.messagesPerSecond.toLocaleString("en")} msg/s, ×${speedup.toFixed(2)} vs ${base.workers} ` +
          `(linear ×${(f.workers / base.workers).toFixed(2)}); cores busy ${(f.machineBusy * 100).toFixed(0)}%; 2-core ceiling ≈ ${f.twoCoreCeiling.toLocaleString("en")} msg/s`,
      );
    }
  }
  console.log(
    `[bench-scale] load average 1 min: ${load0.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end (2 cores, shared)`,
  );
  if (json) {
    writeFileSync(
      json,
      JSON.stringify(
        {
          generatedAt: new Date().toISOString(),
          claims,
          consumers,
          consumerSummary: summary,
          loadAverage: { start: load0, end: loadavg()[0] },
        },
        null,
        2,
      ),
    );
    console.log(`[bench-scale] wrote ${json}`);
  }
}

if (require.main === module) {
  main().then(
    () => {
      if (!flag("worker")) process.exit(0);
    },
    (e: unknown) => {
      console.error(`[bench-scale] ${(e as Error)?.stack ?? e}`);
      process.exit(1);
    },
  );
}
