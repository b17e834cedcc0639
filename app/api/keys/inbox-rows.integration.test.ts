/**
 * The key browser's routes over a real PostgreSQL inbox table (a database of this file's own),
 * beside the shared Redis: `/api/handlers` counts each inbox handler's live rows exactly (psql
 * agrees; expired rows left out), `/api/keys` pages a handler's rows by primary key over several
 * pages (each row once), `/api/keys/lookup` finds a uuid's row with its state, position and
 * fingerprint, `/api/keys/forget` deletes the rows its dry run listed (psql agrees, a row changed
 * since is skipped, the audit keeps the keys); an unreachable database is "not measured" with the
 * reason, never a count of 0.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Pool } from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditResponseSchema } from "@/lib/api/audit";
import { handlersResponseSchema } from "@/lib/api/handlers";
import { forgetResponseSchema } from "@/lib/api/key-actions";
import { keyLookupResponseSchema, keysResponseSchema } from "@/lib/api/keys";
import { GET as auditGET } from "@/app/api/audit/route";
import { GET as handlersGET } from "@/app/api/handlers/route";
import { setAuditStore } from "@/server/audit";
import { MemoryAuditStore } from "@/server/audit/store";
import { parseConfig } from "@/server/config";
import { PostgresInboxRepository, RECOMMENDED_SETUP } from "@/server/dedup";
import { pgInboxPool } from "@/server/dedup-postgres";
import { createInboxStore } from "@/server/dedup-store";
import { clearDeclaredHandlers, registerHandlers } from "@/server/observe/core/handler-registry";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { PostgresInboxInspector } from "@/server/observe/keys/postgres-inbox-inspector";
import { STATS_SAMPLE_ROWS } from "@/server/observe/keys/postgres-inbox-sql";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { LOCAL_REQUEST_HEADERS } from "@/server/testing/app-config";
import { createOwnDatabase, type OwnDatabase } from "@/server/testing/own-database";
import { GET as keysGET } from "./route";
import { GET as lookupGET } from "./lookup/route";
import { POST as forgetPOST } from "./forget/route";

const g = globalThis as typeof globalThis & { __dedupHealthConfig?: unknown };
const saved = g.__dedupHealthConfig;
const service = `ik-${randomBytes(3).toString("hex")}`;
const SCHEMA = "inbox_keys";
const PAID = `${service}:dedup:on-paid`;
const REFUND = `${service}:dedup:on-refund`;
let db: OwnDatabase;
let pool: Pool;
let repo: PostgresInboxRepository;
let observeRedis: RedisLike;
let metrics: LocalSource;

/** The uuid of the i-th on-paid row (a UUID: what the lookup takes). */
const uid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

const psqlCount = async (where: string): Promise<number> =>
  Number(
    (
      await promisify(execFile)("psql", [
        db.url,
        "-tAc",
        `SELECT count(*) FROM ${SCHEMA}.dedup_inbox WHERE service = '${service}' AND ${where}`,
      ])
    ).stdout.trim(),
  );

const get = async (handler: (r: Request) => Promise<Response>, path: string) => {
  const res = await handler(new Request(`http://localhost${path}`, { headers: LOCAL_REQUEST_HEADERS }));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const forget = async (body: unknown) => {
  const res = await forgetPOST(
    new Request("http://localhost/api/keys/forget", {
      method: "POST",
      headers: { "content-type": "application/json", ...LOCAL_REQUEST_HEADERS },
      body: JSON.stringify(body),
    }),
  );
  const json = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return forgetResponseSchema.parse(json);
};

/** Every page of a prefix's keys, following the cursor. */
async function allPages(prefix: string, count: number) {
  const pages = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ prefix, count: String(count), ...(cursor ? { cursor } : {}) });
    const r = await get(keysGET, `/api/keys?${q}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const page = keysResponseSchema.parse(r.body);
    pages.push(page);
    cursor = page.cursor;
  } while (cursor);
  return pages;
}

function useInbox(inspector: PostgresInboxInspector) {
  setObserveContext(createObserveContext({ metrics, redis: observeRedis, inbox: inspector }));
}

beforeAll(async () => {
  process.env.__NEXT_PRIVATE_ORIGIN = "http://127.0.0.1:3000";
  g.__dedupHealthConfig = parseConfig({ REDIS_URL: "redis://127.0.0.1:6379" });
  db = await createOwnDatabase("inbox_keys_");
  pool = new Pool({ connectionString: db.url, max: 3 });
  pool.on("error", () => undefined);
  repo = new PostgresInboxRepository(pgInboxPool(pool), { schema: SCHEMA });
  await repo.ensureSchema();
  // on-paid: 130 live done rows with their first position and fingerprint, 5 expired ones.
  await pool.query(
    `INSERT INTO ${repo.table} (service, handler, uuid, position, fingerprint, state, expires_at)
     SELECT $1, 'on-paid', '00000000-0000-4000-8000-' || lpad(i::text, 12, '0'), 'orders:' || (i % 6) || ':' || i, 'fp' || i,
       'done:orders:' || (i % 6) || ':' || i || '#fp' || i, now() + interval '20 hours'
     FROM generate_series(1, 130) i`,
    [service],
  );
  await pool.query(
    `INSERT INTO ${repo.table} (service, handler, uuid, state, expires_at)
     SELECT $1, 'on-paid', 'expired' || i, 'done', now() - interval '1 minute' FROM generate_series(1, 5) i`,
    [service],
  );
  // on-refund: 2 leases of the autocommit form and 1 done row.
  await pool.query(
    `INSERT INTO ${repo.table} (service, handler, uuid, state, expires_at) VALUES
     ($1, 'on-refund', 'r1', 'processing:gone-1/t1', now() + interval '5 minutes'),
     ($1, 'on-refund', 'r2', 'processing:gone-1/t2', now() + interval '5 minutes'),
     ($1, 'on-refund', 'r3', 'done', now() + interval '2 days')`,
    [service],
  );
  registerHandlers(
    ["on-paid", "on-missing"].map((handler) => ({
      service,
      setup: { ...RECOMMENDED_SETUP, handler, repository: "postgres-inbox" as const },
    })),
  );
  observeRedis = createObserveRedis({ url: "redis://127.0.0.1:6379" });
  metrics = new LocalSource(new Registry());
  await setAuditStore(new MemoryAuditStore());
}, 30_000);

afterAll(async () => {
  setObserveContext(null);
  clearDeclaredHandlers();
  await setAuditStore(null);
  observeRedis?.disconnect();
  await pool?.end();
  await db?.drop();
  g.__dedupHealthConfig = saved;
  delete process.env.__NEXT_PRIVATE_ORIGIN;
});

describe("the key browser over the PostgreSQL inbox table", () => {
  it("counts each handler's live rows exactly, as psql does, named as the inbox's and split by state", async () => {
    const inspector = new PostgresInboxInspector(repo.pool, repo.table);
    useInbox(inspector);
    await inspector.run();
    const d = handlersResponseSchema.parse((await get(handlersGET, "/api/handlers")).body);
    expect(d.inbox).toMatchObject({ store: { status: "up" }, table: `"${SCHEMA}"."dedup_inbox"`, notMeasured: [] });
    const paid = d.handlers.find((h) => h.prefix === PAID)!;
    const refund = d.handlers.find((h) => h.prefix === REFUND)!;
    expect(paid).toMatchObject({ store: "postgres-inbox", exact: true, service, handler: "on-paid" });
    expect(paid.keyCount).toBe(await psqlCount("handler = 'on-paid' AND expires_at > now()"));
    expect(paid.keyCount).toBe(130);
    expect(paid.ttlBuckets.find((b) => b.label === "6 – 24 h")!.count).toBe(130);
    expect(refund.keyCount).toBe(await psqlCount("handler = 'on-refund' AND expires_at > now()"));
    expect(refund.byState).toMatchObject({ processing: 2, done: 1, exact: true });
    // Declared, no row yet: a measured 0 (the table was read), not a handler left out.
    expect(d.handlers.find((h) => h.handler === "on-missing")).toMatchObject({ keyCount: 0, store: "postgres-inbox" });
  });

  it("keeps a big handler's count exact (psql agrees) and reads its states and TTLs from a sample, saying so", async () => {
    await pool.query(
      `INSERT INTO ${repo.table} (service, handler, uuid, state, expires_at)
       SELECT $1, 'bulk', md5(i::text), 'done', now() + interval '3 hours' FROM generate_series(1, $2::int) i`,
      [service, STATS_SAMPLE_ROWS * 2],
    );
    await pool.query(`ANALYZE ${repo.table}`);
    const inspector = new PostgresInboxInspector(repo.pool, repo.table);
    useInbox(inspector);
    await inspector.run();
    const d = handlersResponseSchema.parse((await get(handlersGET, "/api/handlers")).body);
    const bulk = d.handlers.find((h) => h.prefix === `${service}:dedup:bulk`)!;
    expect(bulk.keyCount).toBe(await psqlCount("handler = 'bulk' AND expires_at > now()"));
    expect(bulk).toMatchObject({ exact: true, ttlSampled: true, byState: { exact: false } });
    expect(bulk.sampleSize).toBeGreaterThan(0);
    expect(bulk.sampleSize).toBeLessThan(bulk.keyCount);
    // Every row lives 3 h: the scaled buckets put them all (give or take rounding) in "1 – 6 h".
    const oneToSix = bulk.ttlBuckets.find((b) => b.label === "1 – 6 h")!.count;
    expect(Math.abs(oneToSix - bulk.keyCount)).toBeLessThanOrEqual(1);
    await pool.query(`DELETE FROM ${repo.table} WHERE service = $1 AND handler = 'bulk'`, [service]);
  });

  it("pages a handler's rows by primary key over three pages, each live row exactly once", async () => {
    const inspector = new PostgresInboxInspector(repo.pool, repo.table);
    useInbox(inspector);
    await inspector.run();
    const pages = await allPages(PAID, 50);
    expect(pages.map((p) => p.keys.length)).toEqual([50, 50, 30]);
    expect(pages.every((p) => p.store === "postgres-inbox")).toBe(true);
    const uuids = pages.flatMap((p) => p.keys.map((k) => k.uuid));
    expect(new Set(uuids).size).toBe(130);
    expect(uuids.some((u) => u.startsWith("expired"))).toBe(false);
    expect(pages[0]!.keys[0]).toMatchObject({
      key: `${PAID}:${uid(1)}`,
      state: "done",
      fingerprint: "fp1",
      record: { topic: "orders", partition: 1, offset: "1" },
    });
  });

  it("looks a uuid up in the inbox beside Redis: its state, first position, fingerprint and time left", async () => {
    const inspector = new PostgresInboxInspector(repo.pool, repo.table);
    useInbox(inspector);
    await inspector.run();
    const r = await get(lookupGET, `/api/keys/lookup?uuid=${uid(42)}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const l = keyLookupResponseSchema.parse(r.body);
    const m = l.matches.find((x) => x.prefix === PAID)!;
    expect(m).toMatchObject({ state: "done", fingerprint: "fp42", record: { topic: "orders", partition: 0 } });
    expect(m.ttlMs).toBeGreaterThan(19 * 3600_000);
    expect(l.notChecked).toBeUndefined();
  });

  it("forgets the rows its dry run listed (psql agrees), skips a row changed since, and the audit keeps the keys", async () => {
    const inspector = new PostgresInboxInspector(repo.pool, repo.table);
    useInbox(inspector);
    await inspector.run();
    const dry = await forget({ service, handler: "on-refund", state: "any", leases: "all", dryRun: true });
    expect(dry).toMatchObject({ matched: 3, deleted: 0 });
    expect(await psqlCount("handler = 'on-refund'")).toBe(3);
    // A consumer takes r1 again after the dry run read it: that row is no longer the one listed.
    await pool.query(`UPDATE ${repo.table} SET state = 'done' WHERE service = $1 AND uuid = 'r1'`, [service]);
    const real = await forget({ service, handler: "on-refund", previewId: dry.previewId, dryRun: false });
    expect(real).toMatchObject({ matched: 3, deleted: 2, skipped: 1, complete: true });
    expect(await psqlCount("handler = 'on-refund'")).toBe(1);
    expect(await psqlCount("handler = 'on-refund' AND uuid = 'r1'")).toBe(1);
    const entries = auditResponseSchema.parse(
      await (await auditGET(new Request("http://localhost/api/audit?action=keys.forget"))).json(),
    ).entries;
    const row = entries.find((e) => !e.dryRun && e.result === "ok" && e.filter.previewId === dry.previewId)!;
    expect(row).toMatchObject({ matched: 3, changed: 2 });
    expect([...row.touched.keys!.items].sort()).toEqual([`${REFUND}:r2`, `${REFUND}:r3`]);
  });

  it("says the inbox's handlers are not measured, with the reason, when its database does not answer", async () => {
    const down = createInboxStore({
      url: "postgres://postgres@127.0.0.1:1/none",
      schema: SCHEMA,
      table: "dedup_inbox",
    });
    const inspector = new PostgresInboxInspector(down.repository.pool, down.repository.table);
    useInbox(inspector);
    await inspector.run().catch(() => undefined);
    const d = handlersResponseSchema.parse((await get(handlersGET, "/api/handlers")).body);
    expect(d.inbox!.store.status).toBe("down");
    expect(d.inbox!.notMeasured.map((h) => h.prefix).sort()).toEqual([`${service}:dedup:on-missing`, PAID]);
    expect(d.inbox!.notMeasured[0]!.reason).toMatch(/^postgres-inbox: /);
    expect(d.handlers.filter((h) => h.service === service)).toEqual([]);
    const page = await get(keysGET, `/api/keys?prefix=${encodeURIComponent(PAID)}`);
    expect(page.status).toBe(503);
    expect(String(page.body.detail)).toMatch(/postgres-inbox/);
    const l = keyLookupResponseSchema.parse((await get(lookupGET, `/api/keys/lookup?uuid=${uid(42)}`)).body);
    expect(l.notChecked).toEqual([{ store: "postgres-inbox", reason: expect.any(String) }]);
    await down.close();
  });
});
