/**
 * `npm run worker` started 1, 2 and 3 times: the demo service's replicas, each its own
 * process, deduplicating on the 3-master Redis Cluster, share the 6 partitions of `demo.events` in
 * every one of the service's consumer groups (one per handler) — disjoint, complete and balanced
 * assignments per generation, as `GET /api/consumers`'s describer reports them; a replica that
 * stops (SIGTERM) hands its partitions to the others.
 *
 * The workers are started as `node --import tsx scripts/worker.ts --name <r>` — what `npm run
 * worker` runs (`tsx scripts/worker.ts`), without the npm and tsx wrapper processes, so the pid this
 * test stops is the worker itself. They run under a random SERVICE_NAME, so their groups and keys
 * are their own; nothing is published to the shared topic.
 * Needs `npm run stack:up` (Kafka) and `npm run stack:cluster`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { clusterClient } from "@/server/testing/redis-cluster";
import { Kafka, logLevel, type Admin } from "kafkajs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ConsumerGroupView } from "@/lib/api/consumers";
import { DEMO_TOPIC } from "@/names/product";
import { ConsumerGroupDescriber } from "@/server/observe/kafka/consumer-group";
import { demoGroupIds } from "@/server/notification/demo-handlers";

const BROKERS = (process.env.KAFKA_BROKERS || "127.0.0.1:9092").split(",");
const CLUSTER_NODES = process.env.REDIS_CLUSTER_NODES || "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002";
const service = `scale-${randomBytes(4).toString("hex")}`;
const groups = demoGroupIds(service);

interface Worker {
  name: string;
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  consuming: Promise<void>;
  exited: Promise<number | null>;
}

const workers: Worker[] = [];
let admin: Admin;
let describer: ConsumerGroupDescriber;
let setupError: Error | null = null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWorker(name: string): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/worker.ts", "--name", name], {
    cwd: process.cwd(),
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      KAFKA_BROKERS: BROKERS.join(","),
      REDIS_CLUSTER_NODES: CLUSTER_NODES,
      REDIS_URL: "",
      DATABASE_URL: "",
      SERVICE_NAME: service,
    },
  });
  const lines: string[] = [];
  let ok!: () => void;
  let fail!: (e: Error) => void;
  const consuming = new Promise<void>((res, rej) => {
    ok = res;
    fail = rej;
  });
  consuming.catch(() => undefined);
  const onLine = (line: string) => {
    lines.push(line);
    if (line.includes(`[worker ${name}] consuming`)) ok();
  };
  createInterface({ input: child.stdout }).on("line", onLine);
  createInterface({ input: child.stderr }).on("line", onLine);
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  void exited.then((code) =>
    fail(new Error(`worker ${name} exited (${code}) before consuming:\n${lines.slice(-15).join("\n")}`)),
  );
  const w = { name, child, lines, consuming, exited };
  workers.push(w);
  return w;
}

/** SIGTERM to the worker's pid (SIGKILL after 20 s); resolves with its exit code. */
async function stopWorker(w: Worker): Promise<number | null> {
  if (w.child.exitCode !== null) return w.child.exitCode;
  if (w.child.pid) process.kill(w.child.pid, "SIGTERM");
  const t = setTimeout(() => {
    if (w.child.exitCode === null && w.child.pid) process.kill(w.child.pid, "SIGKILL");
  }, 20_000);
  const code = await w.exited;
  clearTimeout(t);
  workers.splice(workers.indexOf(w), 1);
  return code;
}

/** Every group of the service, once each satisfies `ok`. */
async function untilAll(
  ok: (g: ConsumerGroupView | undefined) => boolean,
  what: string,
  ms = 90_000,
): Promise<ConsumerGroupView[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const views = await Promise.all(
      groups.map(
        async (group) =>
          (await describer.describe({ topic: DEMO_TOPIC, group }).catch(() => ({ groups: [] }))).groups[0],
      ),
    );
    if (views.every(ok)) return views as ConsumerGroupView[];
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not reached in ${ms} ms; last views ${JSON.stringify(views.map((v) => v && { id: v.groupId, state: v.state, members: v.members.map((m) => [m.clientId, m.partitions]) }))}`,
      );
    await sleep(300);
  }
}

const stableWith = (k: number) => (g: ConsumerGroupView | undefined) =>
  g?.state === "Stable" && g.members.length === k && g.unassigned.length === 0;

function expectShared(v: ConsumerGroupView, names: readonly string[]): void {
  expect(v.members).toHaveLength(names.length);
  const held = v.members.flatMap((m) => m.partitions);
  expect([...held].sort(), `${v.groupId}: every partition once`).toEqual([0, 1, 2, 3, 4, 5]);
  expect(v.overlapping).toEqual([]);
  const sizes = v.members.map((m) => m.partitions.length);
  expect(Math.max(...sizes) - Math.min(...sizes), `${v.groupId}: balanced`).toBeLessThanOrEqual(1);
  // Each replica appears once, under a clientId that names it.
  for (const n of names)
    expect(v.members.filter((m) => m.clientId.endsWith(`/${n}`)).length, `${v.groupId}: ${n}`).toBe(1);
}

beforeAll(async () => {
  admin = new Kafka({
    clientId: "worker-scale-test",
    brokers: BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2000,
    retry: { retries: 1 },
  }).admin();
  try {
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(DEMO_TOPIC);
    if (offsets.length !== 6) throw new Error(`${DEMO_TOPIC} has ${offsets.length} partitions, expected 6`);
  } catch (e) {
    setupError = new Error(
      `Kafka at ${BROKERS.join(",")} with ${DEMO_TOPIC} is not usable (${(e as Error).message}): run npm run stack:up`,
    );
    return;
  }
  const c = clusterClient({ clusterRetryStrategy: () => null }, CLUSTER_NODES.split(","));
  try {
    await Promise.race([
      new Promise((r) => c.once("ready", r)),
      sleep(5000).then(() => Promise.reject(new Error("not ready after 5 s"))),
    ]);
  } catch (e) {
    setupError = new Error(
      `Redis Cluster at ${CLUSTER_NODES} is not usable (${(e as Error).message}): run npm run stack:cluster`,
    );
  } finally {
    c.disconnect();
  }
  describer = new ConsumerGroupDescriber(admin);
}, 30_000);

afterAll(async () => {
  for (const w of [...workers]) await stopWorker(w).catch(() => null);
  await admin?.deleteGroups(groups).catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
}, 60_000);

beforeEach(() => {
  if (setupError) throw setupError;
});

describe("npm run worker started 1, 2 and 3 times shares the 6 partitions of demo.events", () => {
  it("one worker holds all six partitions in each of the service's groups", async () => {
    const w = startWorker("r1");
    await w.consuming;
    const views = await untilAll(stableWith(1), "1 worker");
    for (const v of views) expectShared(v, ["r1"]);
  }, 120_000);

  it("a second and a third worker split them: disjoint, complete, balanced, in every group", async () => {
    await startWorker("r2").consuming;
    for (const v of await untilAll(stableWith(2), "2 workers")) expectShared(v, ["r1", "r2"]);
    await startWorker("r3").consuming;
    for (const v of await untilAll(stableWith(3), "3 workers")) {
      expectShared(v, ["r1", "r2", "r3"]);
      expect(v.members.map((m) => m.partitions.length)).toEqual([2, 2, 2]);
    }
  }, 180_000);

  it("a worker stopped with SIGTERM leaves gracefully and the other two take its partitions", async () => {
    const r2 = workers.find((w) => w.name === "r2")!;
    expect(await stopWorker(r2)).toBe(0);
    expect(r2.lines.some((l) => l.includes("[worker r2] stopped"))).toBe(true);
    for (const v of await untilAll(stableWith(2), "2 workers after r2 left")) expectShared(v, ["r1", "r3"]);
  }, 120_000);
});
