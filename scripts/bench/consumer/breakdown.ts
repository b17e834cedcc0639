/**
 * `bench:consumer --breakdown`, no Kafka:
 * 1. CPU µs per message of `Router.deliverBatch` with each middleware of the default stack added
 *    in turn, in-memory store;
 * 2. the Redis server's and the client's CPU per key for batch claims and batch done marks,
 *    "script" vs "pipeline", on an own redis-server, next to a pipelined plain SET (the floor of
 *    one write).
 */
import { loadavg } from "node:os";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import {
  correlationId,
  Deduplicator,
  MemoryRepository,
  type Message,
  type Middleware,
  poisonQueue,
  MemoryPubSub,
  recoverer,
  RedisRepository,
  retry,
  Router,
} from "@/server/dedup";
import { startOwnRedis } from "@/server/testing/own-redis";
import { median } from "../../lib/stats";
import { FailingDlq } from "./ours";
import { redisServerCpu } from "./redis-stats";
import { ulidSource } from "./topic";

type Row = Record<string, unknown>;
/** Keys per measurement of part 2, written in batches of 100. */
const N = 100_000;

/** CPU µs per message through Router.deliverBatch with `mk()` as middleware (median of 5 runs). */
async function stackCost(mk: () => Middleware[], n = 100_000, batch = 100): Promise<number> {
  const never = new AbortController().signal;
  const samples: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    const router = new Router({ onError: () => undefined });
    router.addHandler({
      name: "h",
      topic: "t",
      subscriber: new MemoryPubSub(),
      handler: async () => undefined,
      middleware: mk(),
    });
    const sink = router.sink("h");
    const id = ulidSource();
    const msgs: Message[] = Array.from({ length: n }, () => ({
      uuid: id(),
      metadata: { "Correlation-Id": "c" },
      payload: Buffer.alloc(0),
      signal: never,
      context: {},
    }));
    const u0 = process.cpuUsage();
    for (let i = 0; i < n; i += batch) await sink.deliverBatch(msgs.slice(i, i + batch));
    const u = process.cpuUsage(u0);
    samples.push((u.user + u.system) / n);
  }
  return median(samples);
}

/** Part 1: the default stack's CPU per message, one middleware added per step. */
async function stackSteps(rows: Row[]): Promise<void> {
  const dlq = new FailingDlq();
  const dedup = (metrics: boolean) =>
    new Deduplicator({
      repository: new MemoryRepository(),
      service: "s",
      registry: metrics ? new Registry() : undefined,
    }).middleware;
  const steps: Array<[string, string, () => Middleware[]]> = [
    ["router", "Router.deliverBatch, no middleware", () => []],
    ["correlation_id", "+ correlationId", () => [correlationId()]],
    ["recoverer", "+ recoverer", () => [correlationId(), recoverer()]],
    ["poison_queue", "+ poisonQueue", () => [correlationId(), recoverer(), poisonQueue(dlq, "d")]],
    ["retry", "+ retry", () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry()]],
    [
      "deduplicator",
      "+ Deduplicator, in-memory store, no metrics",
      () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry(), dedup(false)],
    ],
    [
      "metrics",
      "+ metrics (= defaultStack, in-memory store)",
      () => [correlationId(), recoverer(), poisonQueue(dlq, "d"), retry(), dedup(true)],
    ],
  ];
  console.log("1. in-process CPU µs per message (median of 5 × 100k, batches of 100):");
  let prev = 0;
  for (const [id, name, mk] of steps) {
    const us = await stackCost(mk);
    console.log(
      `   ${name.padEnd(48)} ${us.toFixed(2).padStart(6)} µs  (${prev ? `${us - prev >= 0 ? "+" : ""}${(us - prev).toFixed(2)}` : "base"})`,
    );
    rows.push({
      name: `consumer.stack_cpu_us.${id}`,
      value: +us.toFixed(3),
      unit: "us/msg",
      reference: prev ? +prev.toFixed(3) : null,
      ratio: prev ? +(us / prev).toFixed(4) : null,
      detail: { step: name, cumulative: true },
    });
    prev = us;
  }
}

/** [Redis server CPU µs per key, client CPU µs per key] of `write` over N keys. */
async function perKey(r: Redis, write: () => Promise<void>): Promise<[number, number]> {
  const s0 = await redisServerCpu(r);
  const c0 = process.cpuUsage();
  await write();
  const s1 = await redisServerCpu(r);
  const c1 = process.cpuUsage(c0);
  return [((s1 - s0) * 1e6) / N, (c1.user + c1.system) / N];
}

/** Runs `f(i)` for the start of every batch of 100 of the N keys, one after another. */
async function batches(f: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < N; i += 100) await f(i);
}
const hundred = <T>(f: (j: number) => T): T[] => Array.from({ length: 100 }, (_, j) => f(j));

/** Part 2, for one transport: batch claims, compare-and-set done marks, and unconditional `SET … GET` done marks. */
async function markCosts(r: Redis, mode: "script" | "pipeline", rows: Row[]): Promise<void> {
  await r.flushall();
  const repo = new RedisRepository(r, { batchCommand: mode, markCommand: mode });
  const pre = `bd${mode}:dedup:h:01JB8ZQ7K4X2M9V3N5T6W8Y0A`;
  // One token per batch, as the Deduplicator sends it (one value argument per script call).
  const token = (batchStart: number) => `processing:AbCdEf12${batchStart.toString(36)}`;
  const claim = await perKey(r, () =>
    batches((i) => repo.claimBatch(hundred((j) => ({ key: pre + (i + j), value: token(i), ttlMs: 60_000 })))),
  );
  const cas = await perKey(r, () =>
    batches((i) =>
      repo.compareAndSetBatch(
        hundred((j) => ({ key: pre + (i + j), expected: token(i), value: "done", ttlMs: 86_400_000 })),
      ),
    ),
  );
  // The unconditional done mark (SET … PX … GET) on freshly claimed keys, same transport, as the
  // Deduplicator sends it: naming the batch's lease token (`ours`), so the script answers only
  // the keys someone else held.
  await batches((i) => repo.claimBatch(hundred((j) => ({ key: `${pre}m${i + j}`, value: token(i), ttlMs: 60_000 }))));
  const mark = await perKey(r, () =>
    batches((i) =>
      repo.markDoneBatch(
        hundred((j) => ({
          key: `${pre}m${i + j}`,
          value: `done:bench.topic:3:${1_000_000 + i + j}#AbCdEfG`,
          ttlMs: 86_400_000,
          ours: token(i),
        })),
      ),
    ),
  );
  const row = (op: string, [redisUs, clientUs]: [number, number]) => ({
    name: `consumer.redis_cpu_us_per_key.${mode}.${op}`,
    value: +redisUs.toFixed(3),
    unit: "us/key",
    reference: null,
    ratio: null,
    detail: { clientUs: +clientUs.toFixed(3) },
  });
  rows.push(row("done_set_get", mark));
  console.log(
    `   ${mode.padEnd(9)} done mark (unconditional SET … GET): Redis ${mark[0].toFixed(2)} µs, client ${mark[1].toFixed(2)} µs`,
  );
  rows.push(row("claim", claim), row("done_mark", cas));
  console.log(
    `   ${mode.padEnd(9)} claim: Redis ${claim[0].toFixed(2)} µs, client ${claim[1].toFixed(2)} µs   done mark (compare-and-set${mode === "pipeline" ? ", one EVALSHA per key" : ""}): Redis ${cas[0].toFixed(2)} µs, client ${cas[1].toFixed(2)} µs`,
  );
}

/** Part 2's reference: a pipelined plain `SET PX` per key (one write, no check); every Redis row gets it as its reference. */
async function plainSet(r: Redis, rows: Row[]): Promise<void> {
  await r.flushall();
  const [plain, clientUs] = await perKey(r, () =>
    batches(async (i) => {
      const p = r.pipeline();
      for (let j = 0; j < 100; j++)
        p.set(`bdplain:dedup:h:01JB8ZQ7K4X2M9V3N5T6W8Y0A${i + j}`, "done", "PX", 86_400_000);
      await p.exec();
    }),
  );
  for (const row of rows)
    if (String(row.name).startsWith("consumer.redis_cpu"))
      Object.assign(row, { reference: +plain.toFixed(3), ratio: +((row.value as number) / plain).toFixed(4) });
  rows.push({
    name: "consumer.redis_cpu_us_per_key.plain_set",
    value: +plain.toFixed(3),
    unit: "us/key",
    reference: null,
    ratio: null,
    detail: { clientUs: +clientUs.toFixed(3) },
  });
  console.log(
    `   reference: pipelined plain SET PX (one write, no check): Redis ${plain.toFixed(2)} µs, client ${clientUs.toFixed(2)} µs`,
  );
}

/** Both parts; answers the JSON rows. */
export async function breakdown(): Promise<Row[]> {
  const rows: Row[] = [];
  console.log(
    `bench:consumer --breakdown  node ${process.version}  loadavg ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  await stackSteps(rows);
  const srv = await startOwnRedis();
  const r = new Redis(srv.url);
  try {
    console.log(
      `2. Redis server CPU and client CPU per key, own redis-server (pid ${srv.pid}), ${N} keys, batches of 100:`,
    );
    for (const mode of ["script", "pipeline"] as const) await markCosts(r, mode, rows);
    await plainSet(r, rows);
  } finally {
    r.disconnect();
    await srv.stop();
  }
  return rows;
}
