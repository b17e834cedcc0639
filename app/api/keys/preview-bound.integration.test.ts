/**
 * The key actions bound to their preview, on a real Redis (own key prefixes on the shared one, an
 * own redis-server for the LFU policy): `state=done` takes every done form the product writes or
 * reads (plain, position, fingerprint, both, the design note's `1`) and nothing else; an idle
 * filter under an LFU policy is a 400 naming the policy, not a silent zero; the real forget deletes
 * exactly the keys its dry run listed and skips one whose value changed since (a key added since
 * is not touched); a selection of a whole prefix needs an explicit state and a real one its
 * previewId; a stuck-lease dry run takes the leases of a dead owner and leaves a live owner's; the
 * audit row keeps the keys deleted and the selection.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditResponseSchema } from "@/lib/api/audit";
import { forgetResponseSchema } from "@/lib/api/key-actions";
import { GET as auditGET } from "@/app/api/audit/route";
import { claimOwnerOf } from "@/names/keys";
import { setAuditStore } from "@/server/audit";
import { MemoryAuditStore } from "@/server/audit/store";
import { parseConfig } from "@/server/config";
import { Deduplicator, MemoryRepository } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { consumerInfoGauge } from "@/server/transport/replica-id";
import { browseBudget } from "@/server/observe/keys/budget";
import { POST as forget } from "./forget/route";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
const service = `act-pv-${randomBytes(3).toString("hex")}`;
let redis: Redis;
let observeRedis: RedisLike;
let lfu: OwnRedis;
let lfuObserve: RedisLike;

async function call(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await forget(
    new Request("http://localhost/api/keys/forget", {
      method: "POST",
      headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const ok = async (body: unknown) => {
  const r = await call(body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return forgetResponseSchema.parse(r.body);
};
const cliExists = async (keys: string[]) =>
  Number((await promisify(execFile)("redis-cli", ["-p", "6379", "EXISTS", ...keys])).stdout.trim());

/** An observe context on `r` whose metrics say which replicas are alive (`dedup_consumer_info`). */
async function useContext(r: RedisLike, liveReplicas: string[] = []) {
  const registry = new Registry();
  for (const replica of liveReplicas) consumerInfoGauge(registry).set({ service, replica }, 1);
  const metrics = new LocalSource(registry);
  await metrics.sample();
  setObserveContext(createObserveContext({ metrics, redis: r }));
}

beforeAll(async () => {
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  g.__dedupHealthConfig = parseConfig({ REDIS_URL: "redis://127.0.0.1:6379" });
  redis = new Redis("redis://127.0.0.1:6379");
  observeRedis = createObserveRedis({ url: "redis://127.0.0.1:6379" });
  lfu = await startOwnRedis({ args: ["--maxmemory-policy", "allkeys-lfu"] });
  lfuObserve = createObserveRedis({ url: lfu.url });
  await setAuditStore(new MemoryAuditStore());
}, 30_000);

afterAll(async () => {
  setObserveContext(null);
  await setAuditStore(null);
  const keys = await redis.keys(`${service}:*`);
  if (keys.length) await redis.unlink(...keys);
  redis.disconnect();
  observeRedis.disconnect();
  lfuObserve?.disconnect();
  await lfu?.stop();
  g.__dedupHealthConfig = saved;
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("key actions bound to their preview", () => {
  it("forget state=done removes every done form (plain, position, fingerprint, both, the naive 1) and nothing else (redis-cli agrees)", async () => {
    await useContext(observeRedis);
    const p = `${service}:dedup:forms`;
    const done = {
      plain: "done",
      position: "done:demo.events:3:18244",
      fingerprint: "done#AbC_-12",
      both: "done:demo.events:3:18245#AbC_-12",
      naive: "1",
    };
    const others = { lease: "processing:gone-1/tok0", claimed: "claimed:x/t1", other: "doner" };
    for (const [k, v] of Object.entries({ ...done, ...others })) await redis.set(`${p}:${k}`, v, "PX", 600_000);
    const dry = await ok({ service, handler: "forms", state: "done", dryRun: true });
    expect(dry.keys.map((k) => k.key).sort()).toEqual(
      Object.keys(done)
        .map((k) => `${p}:${k}`)
        .sort(),
    );
    const real = await ok({ service, handler: "forms", previewId: dry.previewId, dryRun: false });
    expect(real).toMatchObject({ matched: 5, deleted: 5, skipped: 0 });
    expect(await cliExists(Object.keys(done).map((k) => `${p}:${k}`))).toBe(0);
    expect(await cliExists(Object.keys(others).map((k) => `${p}:${k}`))).toBe(3);
  });

  it("an idle filter under maxmemory-policy allkeys-lfu answers 400 naming the policy; without it the dry run still reads the keys", async () => {
    await useContext(lfuObserve);
    const direct = new Redis(lfu.url);
    for (let i = 0; i < 5; i++) await direct.set(`${service}:dedup:lfu:${i}`, "done", "PX", 600_000);
    const refused = await call({ service, handler: "lfu", state: "done", olderThanMs: 60_000, dryRun: true });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("bad_request");
    expect(refused.body.detail).toMatch(/maxmemory-policy allkeys-lfu/);
    expect(refused.body.detail).toMatch(/idle/);
    expect((await ok({ service, handler: "lfu", state: "done", dryRun: true })).matched).toBe(5);
    direct.disconnect();
  });

  it("readers who spend the key browser's Redis budget do not slow an operator's forget: its dry run and real run complete", async () => {
    await useContext(observeRedis);
    const p = `${service}:dedup:starved`;
    const keys = Array.from({ length: 300 }, (_, i) => `${p}:${i}`);
    await redis.mset(...keys.flatMap((k) => [k, "done"]));
    for (const k of keys) await redis.pexpire(k, 600_000);
    // Anonymous readers take every token the moment it is back, and 10 of them keep a long call
    // in flight on the budget's one slot at all times (what 10 forged clients' exact counts did).
    const drain = setInterval(() => {
      while (browseBudget().tryTake(1));
    }, 1);
    let reading = true;
    const readers = Array.from({ length: 10 }, async () => {
      while (reading) await browseBudget().run(() => new Promise((r) => setTimeout(r, 250)));
    });
    try {
      const t0 = performance.now();
      const dry = await ok({ service, handler: "starved", state: "done", dryRun: true });
      expect(dry).toMatchObject({ matched: 300, complete: true });
      const real = await ok({ service, handler: "starved", previewId: dry.previewId, dryRun: false });
      expect(real).toMatchObject({ deleted: 300, complete: true });
      // Alone it takes about a second here; behind the readers' queue it took 17 s or ran out.
      expect(performance.now() - t0).toBeLessThan(5000);
    } finally {
      clearInterval(drain);
      reading = false;
      await Promise.all(readers);
    }
    expect(await cliExists(keys.slice(0, 50))).toBe(0);
  }, 60_000);

  it("the real forget deletes exactly the keys its dry run listed: a key changed since is skipped, a key added since is not touched (ioredis agrees)", async () => {
    await useContext(observeRedis);
    const p = `${service}:dedup:bound`;
    const keys = Array.from({ length: 12 }, (_, i) => `${p}:${i}`);
    for (const k of keys) await redis.set(k, "done", "PX", 600_000);
    const dry = await ok({ service, handler: "bound", state: "done", dryRun: true });
    expect(dry).toMatchObject({
      matched: 12,
      deleted: 0,
      complete: true,
      selection: { state: "done", olderThanMs: null },
    });
    expect(dry.previewId).toMatch(/^[A-Za-z0-9_-]{8,}$/);
    await redis.set(keys[0]!, "processing:other-host-1/x0", "PX", 600_000); // taken again by a consumer meanwhile
    await redis.set(`${p}:late`, "done", "PX", 600_000); // processed after the dry run
    const real = await ok({ service, handler: "bound", previewId: dry.previewId, dryRun: false });
    expect(real).toMatchObject({ matched: 12, deleted: 11, skipped: 1, complete: true, selection: { state: "done" } });
    expect(await redis.exists(...keys.slice(1))).toBe(0);
    expect(await redis.get(keys[0]!)).toBe("processing:other-host-1/x0");
    expect(await redis.get(`${p}:late`)).toBe("done");
    // The preview is used up: a second confirmation deletes nothing more.
    expect((await call({ service, handler: "bound", previewId: dry.previewId, dryRun: false })).status).toBe(400);
    // The trail keeps the keys deleted and the selection the dry run chose.
    const entries = auditResponseSchema.parse(
      await (await auditGET(new Request("http://localhost/api/audit?action=keys.forget"))).json(),
    ).entries;
    const row = entries.find((e) => !e.dryRun && e.result === "ok" && e.filter.previewId === dry.previewId)!;
    expect(row).toMatchObject({
      matched: 12,
      changed: 11,
      filter: { state: "done", leases: "dead", previewId: dry.previewId },
    });
    expect(row.touched.keys!.total).toBe(11);
    expect([...row.touched.keys!.items].sort()).toEqual(keys.slice(1).sort());
  });

  it("a selection of a whole prefix needs an explicit state, and a real one the previewId of its dry run", async () => {
    await useContext(observeRedis);
    const p = `${service}:dedup:guard`;
    await redis.set(`${p}:a`, "done", "PX", 600_000);
    const noState = await call({ service, handler: "guard", dryRun: false });
    expect(noState.status).toBe(400);
    expect(noState.body.detail).toMatch(/^state: /);
    expect((await call({ service, handler: "guard", dryRun: true })).status).toBe(400);
    const noPreview = await call({ service, handler: "guard", state: "any", dryRun: false });
    expect(noPreview.status).toBe(400);
    expect(noPreview.body.detail).toMatch(/^previewId: /);
    expect(await redis.exists(`${p}:a`)).toBe(1);
    expect((await ok({ service, handler: "guard", state: "any", dryRun: true })).matched).toBe(1);
  });

  it("stuck leases: the dry run takes a dead owner's leases and leaves a live owner's and those naming no owner", async () => {
    const live = "host-a-100";
    await useContext(observeRedis, [live]);
    const p = `${service}:dedup:leases`;
    for (let i = 0; i < 3; i++) await redis.set(`${p}:live${i}`, `processing:${live}/AbCdEfGh${i}`, "PX", 600_000);
    for (let i = 0; i < 4; i++) await redis.set(`${p}:dead${i}`, `processing:host-b-200/ZyXwVuTs${i}`, "PX", 600_000);
    for (let i = 0; i < 2; i++) await redis.set(`${p}:old${i}`, `processing:AbCdEfGh${i}`, "PX", 600_000);
    const dry = await ok({ service, handler: "leases", state: "processing", dryRun: true });
    expect(dry).toMatchObject({ matched: 4, liveLeasesLeft: 5 });
    expect(dry.keys.map((k) => [k.owner, k.ownerAlive])).toEqual(Array(4).fill(["host-b-200", false]));
    await ok({ service, handler: "leases", previewId: dry.previewId, dryRun: false });
    expect(await redis.exists(...[0, 1, 2].map((i) => `${p}:live${i}`), `${p}:old0`, `${p}:old1`)).toBe(5);
    expect(await redis.exists(...[0, 1, 2, 3].map((i) => `${p}:dead${i}`))).toBe(0);
    // With every lease asked for, the live and unknown owners' are listed as such.
    const all = await ok({ service, handler: "leases", state: "processing", leases: "all", dryRun: true });
    expect(all.keys.map((k) => k.ownerAlive).sort()).toEqual([null, null, true, true, true]);
  });

  it("the Deduplicator's lease names this process as its owner", async () => {
    const repo = new MemoryRepository();
    const d = new Deduplicator({ repository: repo, service, registry: new Registry() });
    let seen: string | null = null;
    await d.middleware(async (msg) => {
      seen = repo.get(d.keyOf(msg));
    })({
      uuid: "u1",
      metadata: {},
      payload: Buffer.from("{}"),
      context: { handler: "h" },
      signal: new AbortController().signal,
    } as never);
    expect(seen).toMatch(/^processing:/);
    expect(claimOwnerOf(seen!)).toBe(`${hostname()}-${process.pid}`);
  });
});
