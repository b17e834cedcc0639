import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@/server/testing/net";
import { clusterClient } from "@/server/testing/redis-cluster";
import { deduplicator } from "../deduplicator/deduplicator";
import { DedupStoreError } from "../errors";
import { failClosed, failOpen } from "./failure-mode";
import { newMessage } from "../message";
import { METRIC_NAMES } from "../../../names/dedup";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository } from "./redis-repository";
import { CLAIM_LUA, COMPARE_AND_DELETE_LUA } from "./redis-scripts";
import { redisRepositorySuite } from "./redis-repository.suite";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

redisRepositorySuite("standalone Redis", () => new Redis(REDIS_URL, RECOMMENDED_IOREDIS_OPTIONS));

// Opt-in: the same suite on a Redis Cluster, e.g. DEDUP_TEST_CLUSTER_NODES=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
const clusterNodes = process.env.DEDUP_TEST_CLUSTER_NODES?.split(",").filter(Boolean);
if (clusterNodes?.length) {
  redisRepositorySuite("Redis Cluster", () =>
    clusterClient(
      { enableAutoPipelining: true, redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 } },
      clusterNodes,
    ),
  );
}

async function errorsBy(registry: Registry, reason: string): Promise<number> {
  const m = await registry.getSingleMetric(METRIC_NAMES.errors)!.get();
  return m.values.filter((v) => v.labels.reason === reason).reduce((s, v) => s + v.value, 0);
}

function msg(uuid: string) {
  const m = newMessage(uuid, "");
  m.context = { handler: "h", topic: "in" };
  return m;
}

describe("Redis unreachable (a closed port)", () => {
  let client: Redis;
  beforeAll(async () => {
    client = new Redis({
      host: "127.0.0.1",
      port: await freePort(),
      ...RECOMMENDED_IOREDIS_OPTIONS,
      retryStrategy: () => 50,
    });
    client.on("error", () => undefined);
  });
  afterAll(() => client.disconnect());

  it("failOpen lets the message through and counts redis_conn", async () => {
    const registry = new Registry();
    const runs: string[] = [];
    const h = deduplicator({
      repository: failOpen(new RedisRepository(client)),
      service: "down",
      registry,
      timeoutMs: 5_000,
    })(async (m) => void runs.push(m.uuid));
    await h(msg("U1"));
    expect(runs).toEqual(["U1"]);
    expect(await errorsBy(registry, "redis_conn")).toBe(1);
  });

  it("failClosed throws a retryable DedupStoreError(redis_conn) and does not run the handler", async () => {
    const registry = new Registry();
    const runs: string[] = [];
    const h = deduplicator({
      repository: failClosed(new RedisRepository(client)),
      service: "down",
      registry,
      timeoutMs: 5_000,
    })(async (m) => void runs.push(m.uuid));
    const err = await h(msg("U2")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DedupStoreError);
    expect(err).toMatchObject({ reason: "redis_conn", retryable: true });
    expect(runs).toEqual([]);
    expect(await errorsBy(registry, "redis_conn")).toBe(1);
  });
});

describe("a store call slower than timeoutMs (own redis-server blocked by DEBUG SLEEP)", () => {
  let server: ChildProcess;
  let port: number;
  let client: Redis;
  let blocker: Redis;

  beforeAll(async () => {
    port = await freePort();
    server = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--enable-debug-command",
        "yes",
      ],
      { stdio: "ignore" },
    );
    client = new Redis({ port, host: "127.0.0.1", ...RECOMMENDED_IOREDIS_OPTIONS, retryStrategy: () => 50 });
    blocker = new Redis({ port, host: "127.0.0.1", retryStrategy: () => 50 });
    // Until the server listens, connection errors are expected.
    client.on("error", () => undefined);
    blocker.on("error", () => undefined);
    for (let i = 0; i < 50; i++) {
      try {
        await client.ping();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await blocker.ping();
  });
  afterAll(async () => {
    client.disconnect();
    blocker.disconnect();
    if (server.pid) process.kill(server.pid, "SIGTERM");
  });

  // Blocks the server for 1 s; the claim is sent 100 ms later, so it waits behind the sleep.
  const slowDown = () => void blocker.call("DEBUG", "SLEEP", "1").catch(() => undefined);

  /** A Deduplicator (100 ms timeout) over `wrap(repository)`, started once the server is blocked. */
  const onBlockedServer = async (wrap: typeof failOpen) => {
    const registry = new Registry();
    const runs: string[] = [];
    const h = deduplicator({
      repository: wrap(new RedisRepository(client)),
      service: "slow",
      registry,
      timeoutMs: 100,
    })(async (m) => void runs.push(m.uuid));
    slowDown();
    await new Promise((r) => setTimeout(r, 100));
    return { h, registry, runs };
  };

  it("failOpen: redis_timeout, the handler runs", async () => {
    const { h, registry, runs } = await onBlockedServer(failOpen);
    const t0 = Date.now();
    await h(msg("T1"));
    expect(Date.now() - t0).toBeLessThan(800); // did not wait for the store
    expect(runs).toEqual(["T1"]);
    expect(await errorsBy(registry, "redis_timeout")).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000));
  });

  it("failClosed: DedupStoreError(redis_timeout), the handler does not run", async () => {
    const { h, registry, runs } = await onBlockedServer(failClosed);
    const err = await h(msg("T2")).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "DedupStoreError", reason: "redis_timeout" });
    expect(runs).toEqual([]);
    expect(await errorsBy(registry, "redis_timeout")).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000));
  });

  it("falls back to EVAL on NOSCRIPT (script cache flushed) and works with the Lua claim for Redis < 7", async () => {
    await client.call("SCRIPT", "FLUSH");
    const repo = new RedisRepository(client, { claimCommand: "lua" });
    expect(
      Number(await client.call("SCRIPT", "EXISTS", COMPARE_AND_DELETE_LUA.sha).then((r) => (r as number[])[0])),
    ).toBe(0);
    expect(await repo.claim("k1", "processing:a", 5_000)).toBeNull();
    expect(await repo.claim("k1", "processing:b", 5_000)).toBe("processing:a");
    expect(await repo.compareAndDelete("k1", "processing:a")).toBe(true);
    expect((await client.call("SCRIPT", "EXISTS", COMPARE_AND_DELETE_LUA.sha, CLAIM_LUA.sha)) as number[]).toEqual([
      1, 1,
    ]);
    await client.call("SCRIPT", "FLUSH");
    const batch = await repo.claimBatch([
      { key: "k2", value: "v", ttlMs: 5_000 },
      { key: "k2", value: "w", ttlMs: 5_000 },
    ]);
    expect(batch).toEqual([null, "v"]);
  });
});
