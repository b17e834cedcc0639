/**
 * Step 2 of bench:scale: consumer messages/s with 1, 2 and 3 worker processes in ONE consumer group
 * on a fresh 6-partition topic, each round's workers joined before the topic is filled and released
 * at one gate; with the CPU each message cost in the workers and in the stack's own processes.
 */
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import type { Cluster, Redis } from "ioredis";
import { Kafka, logLevel, Partitioners, type Admin } from "kafkajs";
import { ConsumerGroupDescriber } from "@/server/observe/kafka/consumer-group";
import { deletePrefix } from "@/server/testing/redis-cluster";
import { encodeRecord } from "@/server/transport/watermill-codec";
import { createTopicsReady } from "@/server/transport/topics";
import { arg, intArg } from "../../lib/args";
import { median } from "../../lib/stats";
import { BROKERS, PARTITIONS, clusterClient, ready, sleep, standaloneClient } from "./clients";
import { cpuTicks, processCpuMs, servicePids } from "./proc";
import { startWorker, stopWorker, type WorkerHandle } from "./workers";

/** One round's figures at one worker count. */
export interface ConsumerFigures {
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

/** `n` Watermill-format records spread over the partitions, in batches of 2000. */
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

/** What every round shares: the broker, its admin and group describer, the Redis the workers use. */
interface Rig {
  kafka: Kafka;
  admin: Admin;
  describer: ConsumerGroupDescriber;
  messages: number;
  /** The stack's processes whose CPU is measured, by name. */
  services: Map<string, number>;
}

/** The rounds of `--workers`, `--rounds` times, the order alternated (1,2,3 then 3,2,1…) so a drift in the machine's load falls on all alike. */
function roundPlan(): Array<{ k: number; round: number }> {
  const rounds = intArg("rounds", 2, 1, 10);
  const once = arg("workers", "1,2,3").split(",").map(Number);
  const plan = Array.from({ length: rounds }, (_, r) =>
    (r % 2 === 0 ? once : [...once].reverse()).map((k) => ({ k, round: r + 1 })),
  ).flat();
  const counts = once;
  if (!counts.every((k) => Number.isInteger(k) && k >= 1 && k <= PARTITIONS))
    throw new RangeError(`bench-scale: --workers must list integers in [1, ${PARTITIONS}]`);
  return plan;
}

/** Waits for ONE stable generation holding all k workers; whether their partitions are disjoint and complete. */
async function settled(rig: Rig, topic: string, group: string, k: number, workers: WorkerHandle[]): Promise<boolean> {
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
    const r = await rig.describer.describe({ topic, group });
    view = r.groups[0];
    if (view && view.state === "Stable" && view.members.length === k && view.unassigned.length === 0) break;
    await sleep(250);
  }
  if (!view || view.members.length !== k || view.unassigned.length > 0)
    throw new Error(`group ${group} did not settle with ${k} members: ${JSON.stringify(view)}`);
  const held = view.members.flatMap((m) => m.partitions);
  return held.length === new Set(held).size && new Set(held).size === PARTITIONS && view.overlapping.length === 0;
}

/** Resolves when the group committed every message (300 s at most). */
async function drained(rig: Rig, topic: string, group: string): Promise<void> {
  // Done when the group committed every message.
  const deadline = Date.now() + 300_000;
  for (;;) {
    const r = await rig.describer.describe({ topic, group });
    const g = r.groups[0];
    if (g && g.totalLag === 0 && g.partitions.every((p) => p.committedOffset !== null)) break;
    if (Date.now() > deadline)
      throw new Error(`workers did not finish ${rig.messages} messages in 300 s (lag ${g?.totalLag})`);
    await sleep(100);
  }
}

/** The round's figures from the workers' reports, the cores' ticks and the services' CPU. */
function roundFigures(
  at: { k: number; round: number; messages: number; gateOpened: number; disjoint: boolean },
  reports: Array<Record<string, unknown>>,
  serviceMs: Record<string, number>,
  c0: { busy: number; total: number },
  c1: { busy: number; total: number },
): ConsumerFigures {
  const { k, round, messages, gateOpened, disjoint } = at;
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
  return {
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
}

/** One round's line: msg/s, cores busy, CPU per message and the 2-core ceiling, each worker's share. */
function printRound(f: ConsumerFigures): void {
  const { round, workers: k, messages, windowMs, perWorker } = f;
  const workerMsPerMsg = f.cpuMsPerMessage.workers;
  const serviceMs = f.cpuMsPerMessage.services;
  const disjoint = f.assignmentsDisjointAndComplete;
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
}

/** One round: k workers join an empty topic, it is filled, the gate opens, the group drains it. */
async function runRound(
  rig: Rig,
  at: { k: number; round: number; topic: string; group: string; service: string; redisKind: string },
): Promise<ConsumerFigures> {
  const { k, round, topic, group, service, redisKind } = at;
  const { messages, services } = rig;
  await createTopicsReady(rig.admin, [{ name: topic, partitions: PARTITIONS }]);
  const workers = Array.from({ length: k }, (_, i) =>
    startWorker({ topic, group, replica: `w${k}-${i + 1}`, service, redis: redisKind }),
  );
  try {
    const disjoint = await settled(rig, topic, group, k, workers);
    await fillTopic(rig.kafka, topic, messages);
    const c0 = cpuTicks();
    const s0 = new Map([...services].map(([n, pid]) => [n, processCpuMs(pid)]));
    const gateOpened = Date.now();
    for (const w of workers) w.child.stdin.write("go\n");
    await drained(rig, topic, group);
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
    const f = roundFigures({ k, round, messages, gateOpened, disjoint }, reports, serviceMs, c0, c1);
    printRound(f);
    return f;
  } finally {
    await Promise.all(workers.map((w) => stopWorker(w, 5000).catch(() => null)));
  }
}

/** Every round of the plan; deletes its topics, groups and keys at the end. */
export async function benchConsumers(): Promise<ConsumerFigures[]> {
  const messages = intArg("messages", 30_000, 600, 2_000_000);
  const plan = roundPlan();
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
  const redis: Redis | Cluster = redisKind === "standalone" ? standaloneClient() : clusterClient();
  try {
    await ready(redis, redisKind);
    const services = servicePids(
      redisKind === "cluster" ? ["kafka", "redis-7000", "redis-7001", "redis-7002"] : ["kafka", "redis"],
    );
    const rig: Rig = { kafka, admin, describer, messages, services };
    for (const { k, round } of plan) {
      const topic = `bench-scale-${tag}-w${k}-r${round}`;
      const group = topic;
      topics.push(topic);
      groups.push(group);
      out.push(await runRound(rig, { k, round, topic, group, service, redisKind }));
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

/** Medians per worker count over the rounds. */
export function consumerSummary(all: readonly ConsumerFigures[]) {
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
