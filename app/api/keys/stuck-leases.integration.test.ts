/**
 * Stuck leases after a SIGKILL, all real: two consumer replicas, each its own process
 * (server/testing/lease-holder.ts), take leases with the Deduplicator on the shared Redis and hold
 * them, each serving `dedup_consumer_info` to an own Prometheus; one is SIGKILLed. The forget dry
 * run of `state: processing` lists the dead replica's leases, each with its owner shown dead, and
 * not the live one's (counted as left out); the real forget deletes the dead one's only.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetResponseSchema } from "@/lib/api/key-actions";
import { setAuditStore } from "@/server/audit";
import { MemoryAuditStore } from "@/server/audit/store";
import { parseConfig } from "@/server/config";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { PrometheusSource } from "@/server/observe/metrics/prometheus";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { freePort } from "@/server/testing/net";
import { startOwnPrometheus, type OwnPrometheus } from "@/server/testing/own-prometheus";
import { POST as forget } from "./forget/route";

const REDIS = "redis://127.0.0.1:6379";
const service = `act-stuck-${randomBytes(3).toString("hex")}`;
const handler = "h";
const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
const children: ChildProcess[] = [];
let prom: OwnPrometheus | undefined;
let redis: Redis;
let observeRedis: RedisLike;

/** Starts a lease holder with `n` leases; resolves with its replica id once they are in Redis. */
function holder(n: number, port: number): Promise<{ child: ChildProcess; replica: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "server/testing/lease-holder.ts", REDIS, service, handler, String(n), String(port)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      const m = /ready (\S+)/.exec(d.toString());
      if (m) resolve({ child, replica: m[1]! });
    });
    child.on("exit", (code) => reject(new Error(`lease holder exited (${code}): ${err}`)));
  });
}

async function until(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  g.__dedupHealthConfig = parseConfig({ REDIS_URL: REDIS });
  redis = new Redis(REDIS);
  observeRedis = createObserveRedis({ url: REDIS });
  await setAuditStore(new MemoryAuditStore());
});

afterAll(async () => {
  for (const c of children) if (c.pid && c.exitCode === null && c.signalCode === null) process.kill(c.pid, "SIGKILL");
  await prom?.stop();
  setObserveContext(null);
  await setAuditStore(null);
  const keys = await redis.keys(`${service}:*`);
  if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
  observeRedis.disconnect();
  g.__dedupHealthConfig = saved;
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("stuck leases after a SIGKILL", () => {
  it("the dry run lists the killed replica's leases (owner dead) and not the live replica's; the real forget deletes only those", async () => {
    const [pa, pb] = [await freePort(), await freePort()];
    const [live, dead] = await Promise.all([holder(3, pa), holder(4, pb)]);
    prom = await startOwnPrometheus({ targets: [`127.0.0.1:${pa}`, `127.0.0.1:${pb}`], ruleFiles: [], intervalSec: 1 });
    const metrics = new PrometheusSource(prom.url, { cacheTtlMs: 0 });
    const replicas = async () =>
      new Set(
        (await metrics.instant("consumer_instances"))
          .filter((s) => s.labels.service === service)
          .map((s) => s.labels.replica),
      );
    await until("both replicas scraped", async () => (await replicas()).size === 2);
    process.kill(dead.child.pid!, "SIGKILL");
    await until("the killed replica gone from the scrape", async () => !(await replicas()).has(dead.replica));
    setObserveContext(createObserveContext({ metrics, redis: observeRedis }));

    const res = await forget(
      new Request("http://localhost/api/keys/forget", {
        method: "POST",
        headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
        body: JSON.stringify({ service, handler, state: "processing", dryRun: true }),
      }),
    );
    const dry = forgetResponseSchema.parse(await res.json());
    expect(dry).toMatchObject({ matched: 4, liveLeasesLeft: 3 });
    expect(dry.keys.map((k) => [k.owner, k.ownerAlive])).toEqual(Array(4).fill([dead.replica, false]));
    const real = await forget(
      new Request("http://localhost/api/keys/forget", {
        method: "POST",
        headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
        body: JSON.stringify({ service, handler, previewId: dry.previewId, dryRun: false }),
      }),
    );
    expect(forgetResponseSchema.parse(await real.json())).toMatchObject({ deleted: 4, skipped: 0 });
    const left = await redis.keys(`${service}:dedup:${handler}:*`);
    expect(left.sort()).toEqual([0, 1, 2].map((i) => `${service}:dedup:${handler}:${live.replica}-${i}`));
  }, 90_000);
});
