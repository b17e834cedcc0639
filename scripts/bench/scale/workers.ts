/**
 * The worker processes of bench:scale's consumer step: each is scripts/bench/scale.ts in `--worker`
 * mode (the library's KafkaSubscriber → Router → defaultStack with the Deduplicator on Redis → a
 * no-op handler), driven over stdin ("go", "stop") and reporting as JSON lines on stdout.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { logLevel } from "kafkajs";
import { Registry } from "prom-client";
import { KafkaSubscriber } from "@/server/transport/kafka-subscriber";
import { type Message, type Publisher, RedisRepository, Router, defaultStack } from "@/server/dedup";
import { arg } from "../../lib/args";
import { BROKERS, clusterClient, ready, sleep, standaloneClient } from "./clients";

/** The script a worker process runs (in `--worker` mode). */
const SCALE_SCRIPT = join(__dirname, "..", "scale.ts");

/** Worker mode: joins the group, waits for "go" on stdin, processes, reports on "stop" (or SIGTERM). */
export async function worker(): Promise<void> {
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

/** A started worker process: its reports so far, and promises of its joining and final report. */
export interface WorkerHandle {
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
      SCALE_SCRIPT,
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
