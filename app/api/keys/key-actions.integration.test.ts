/**
 * The key actions against the real stack. The workflow after a handler bug: 50 messages "processed"
 * by a handler that swallowed them (keys done, no side effect) → forget their keys by UUID list
 * (a dry run says 50 and deletes nothing, the real run deletes 50, `redis-cli` agrees) → the
 * messages are replayed (same UUIDs) → each processed once; the audit trail (PostgreSQL) lists both
 * actions with their counts, also after a restart of the store. Also: stuck leases forgotten by state
 * on Redis Cluster, the TTL policy guard, DEDUP_PREFIXES, and the in-memory store of embedded mode.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditResponseSchema } from "@/lib/api/audit";
import { forgetResponseSchema, ttlResponseSchema } from "@/lib/api/key-actions";
import { GET as auditGET } from "@/app/api/audit/route";
import { setAuditStore } from "@/server/audit";
import { PostgresAuditStore } from "@/server/audit/store";
import { EVENT_TYPE_KEY } from "@/names/dedup";
import { parseConfig } from "@/server/config";
import { MemoryRepository } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { registerMemoryStore } from "@/server/dedup-store";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { startBuggyConsumer, TEST_DATABASE_URL, type BuggyConsumer } from "@/server/testing/buggy-consumer";
import { clusterClient, clusterNodes } from "@/server/testing/redis-cluster";
import { KafkaTransport } from "@/server/transport";
import { POST as forget } from "./forget/route";
import { POST as ttl } from "./ttl/route";

const BROKERS = "127.0.0.1:9092";
const topic = `act-keys-${randomBytes(4).toString("hex")}`;
const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
let transport: KafkaTransport;
let redis: Redis;
let observeRedis: RedisLike;
let consumer: BuggyConsumer;
const auditTable = `act_audit_${randomBytes(3).toString("hex")}`;

async function auditStoreNow(): Promise<PostgresAuditStore> {
  const store = new PostgresAuditStore(TEST_DATABASE_URL, auditTable);
  await store.migrate();
  await setAuditStore(store);
  return store;
}
const audit = async () =>
  auditResponseSchema.parse(
    await (await auditGET(new Request("http://localhost/api/audit?action=keys.forget"))).json(),
  );

async function call(
  route: (r: Request) => Promise<Response>,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await route(
    new Request("http://localhost/api/keys/x", {
      method: "POST",
      headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function useContext(redisLike: RedisLike | null, prefixes?: string[]) {
  setObserveContext(
    createObserveContext({
      metrics: new LocalSource(new Registry()),
      redis: redisLike,
      prefixes,
      memory: redisLike ? undefined : () => [],
    }),
  );
}

async function until(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  // A server bound to 127.0.0.1 and requests from this machine: the access rules have their own test.
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  g.__dedupHealthConfig = parseConfig({
    KAFKA_BROKERS: BROKERS,
    CONSUMER_TOPICS: topic,
    REDIS_URL: "redis://127.0.0.1:6379",
  });
  transport = new KafkaTransport([BROKERS]);
  await transport.createTopics([
    { name: topic, partitions: 2 },
    { name: `${topic}.dlq`, partitions: 1 },
  ]);
  redis = new Redis("redis://127.0.0.1:6379");
  observeRedis = createObserveRedis({ url: "redis://127.0.0.1:6379" });
  consumer = await startBuggyConsumer({ transport, topic, dlqTopic: `${topic}.dlq`, redis });
  await auditStoreNow();
}, 60_000);

afterAll(async () => {
  const last = new PostgresAuditStore(TEST_DATABASE_URL, auditTable);
  await last.drop();
  await last.close();
  await setAuditStore(null);
  await consumer?.stop();
  setObserveContext(null);
  await redis.eval(
    "for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', k) end",
    0,
    `${consumer.service}:*`,
  );
  redis.disconnect();
  observeRedis.disconnect();
  await transport.deleteTopics([topic, `${topic}.dlq`]);
  await transport.close();
  g.__dedupHealthConfig = saved;
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("key actions", () => {
  it("after a handler bug: forget 50 keys by UUID (dry run 50, real 50, redis-cli agrees), replay, each processed once", async () => {
    useContext(observeRedis);
    const uuids = Array.from({ length: 50 }, () => ulid());
    const publish = () =>
      transport.publisher.publish(
        topic,
        ...uuids.map((uuid) => ({
          uuid,
          metadata: { [EVENT_TYPE_KEY]: "x" },
          payload: Buffer.from(`{"u":"${uuid}"}`),
          signal: new AbortController().signal,
          context: {},
        })),
      );
    consumer.swallow = true; // the bug: acked, keys marked done, no side effect
    await publish();
    const keys = uuids.map((u) => `${consumer.service}:dedup:${consumer.handler}:${u}`);
    await until("50 done keys", async () => (await redis.exists(...keys)) === 50);
    expect(await consumer.rows()).toBe(0);
    consumer.swallow = false; // the fix is deployed

    const sel = { service: consumer.service, handler: consumer.handler, uuids };
    const dry = forgetResponseSchema.parse((await call(forget, { ...sel, dryRun: true })).body);
    expect(dry).toMatchObject({ matched: 50, deleted: 0, complete: true });
    expect(await redis.exists(...keys)).toBe(50);
    const real = forgetResponseSchema.parse((await call(forget, { ...sel, dryRun: false })).body);
    expect(real).toMatchObject({ matched: 50, deleted: 50, complete: true });
    const { stdout } = await promisify(execFile)("redis-cli", ["-p", "6379", "EXISTS", ...keys]);
    expect(stdout.trim()).toBe("0");

    await publish(); // the replay: the same 50 events again
    await until("50 side-effect rows", async () => (await consumer.rows()) === 50);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await consumer.rows()).toBe(50);
    for (const u of uuids.slice(0, 5)) expect(await consumer.rows(u)).toBe(1);

    // The trail lists both actions, newest first, and a restarted store (a new pool) still has them.
    const expected = [
      { action: "keys.forget", dryRun: false, matched: 50, changed: 50, result: "ok", who: "local" },
      { action: "keys.forget", dryRun: true, matched: 50, changed: 0, result: "ok", who: "local" },
    ];
    const before = await audit();
    expect(before.store).toBe("postgres");
    expect(before.entries).toMatchObject(expected);
    expect(before.entries[0]!.filter).toMatchObject({ service: consumer.service, handler: consumer.handler });
    await auditStoreNow();
    expect((await audit()).entries).toMatchObject(expected);
  });

  it("sets a TTL within the handler's policy; beyond it only when asked, and says so", async () => {
    useContext(observeRedis);
    const prefix = `act-ttl-${randomBytes(3).toString("hex")}:dedup:h`;
    const [service, , handler] = prefix.split(":") as [string, string, string];
    await redis.set(`${prefix}:a`, "done", "PX", 3_600_000);
    const refused = await call(ttl, { service, handler, uuids: ["a"], ttlMs: 30 * 86_400_000, dryRun: false });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/TTL policy/);
    const ok = ttlResponseSchema.parse(
      (await call(ttl, { service, handler, uuids: ["a"], ttlMs: 60_000, dryRun: false })).body,
    );
    expect(ok).toMatchObject({ matched: 1, changed: 1, beyondPolicy: false, policySource: "default" });
    expect(await redis.pttl(`${prefix}:a`)).toBeLessThanOrEqual(60_000);
    const beyond = ttlResponseSchema.parse(
      (
        await call(ttl, {
          service,
          handler,
          uuids: ["a"],
          ttlMs: 30 * 86_400_000,
          allowBeyondPolicy: true,
          dryRun: false,
        })
      ).body,
    );
    expect(beyond.beyondPolicy).toBe(true);
    await redis.unlink(`${prefix}:a`);
  });

  it("never touches a key outside DEDUP_PREFIXES (403, the key stays)", async () => {
    useContext(observeRedis, ["only-this:dedup:*"]);
    await redis.set("act-other:dedup:h:z", "done", "PX", 60_000);
    const r = await call(forget, { service: "act-other", handler: "h", uuids: ["z"], dryRun: false });
    expect(r.status).toBe(403);
    expect(await redis.exists("act-other:dedup:h:z")).toBe(1);
    await redis.unlink("act-other:dedup:h:z");
  });

  it("on Redis Cluster: forgets the stuck processing leases of a handler on every master, not its done keys", async () => {
    const cluster = clusterClient({}, clusterNodes());
    useContext(cluster);
    const service = `act-cl-${randomBytes(3).toString("hex")}`;
    const prefix = `${service}:dedup:h`;
    for (let i = 0; i < 120; i++)
      await cluster.set(`${prefix}:${i}`, i % 3 === 0 ? "processing:tok" : "done:t:0:1", "PX", 600_000);
    // Tokens that name no owner: their owners cannot be known dead, so they are chosen only with leases: "all".
    const sel = { service, handler: "h", state: "processing", leases: "all" };
    const dry = forgetResponseSchema.parse((await call(forget, { ...sel, dryRun: true })).body);
    expect(dry).toMatchObject({ matched: 40, deleted: 0 });
    expect(
      forgetResponseSchema.parse((await call(forget, { ...sel, previewId: dry.previewId, dryRun: false })).body),
    ).toMatchObject({ matched: 40, deleted: 40, skipped: 0, complete: true });
    let left = 0;
    for (let i = 0; i < 120; i++) left += await cluster.exists(`${prefix}:${i}`);
    expect(left).toBe(80);
    for (let i = 0; i < 120; i++) await cluster.unlink(`${prefix}:${i}`);
    cluster.disconnect();
  });

  it("in embedded mode acts on the in-memory store", async () => {
    const repo = registerMemoryStore(new MemoryRepository());
    await repo.claim("notification:dedup:mem:u1", "done", 60_000);
    await repo.claim("notification:dedup:mem:u2", "processing:x", 60_000);
    setObserveContext(
      createObserveContext({ metrics: new LocalSource(new Registry()), redis: null, memory: () => [repo] }),
    );
    const dry = forgetResponseSchema.parse(
      (await call(forget, { service: "notification", handler: "mem", state: "any", leases: "all", dryRun: true })).body,
    );
    expect(dry).toMatchObject({ matched: 2, deleted: 0 });
    const doneOnly = forgetResponseSchema.parse(
      (await call(forget, { service: "notification", handler: "mem", state: "done", dryRun: true })).body,
    );
    const real = forgetResponseSchema.parse(
      (await call(forget, { service: "notification", handler: "mem", previewId: doneOnly.previewId, dryRun: false }))
        .body,
    );
    expect(real).toMatchObject({ matched: 1, deleted: 1 });
    expect(repo.get("notification:dedup:mem:u1")).toBeNull();
    expect(repo.get("notification:dedup:mem:u2")).toBe("processing:x");
  });
});
