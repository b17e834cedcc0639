/**
 * `GET /api/keys` as a browser calls it, answer redaction included (REDIS_URL configured): a viewer
 * paging through a handler gets every key once, and the cursor of each page — which must not name
 * the Redis address — comes back intact, so the next page is a 200, not a 400.
 */
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keysResponseSchema } from "@/lib/api/keys";
import { parseConfig } from "@/server/config";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { fakeUlid, seedKeys } from "@/server/testing/seed-keys";
import { GET } from "./route";

const PREFIX = "notification:dedup:on-paged";
const SEEDED = 260;
type G = typeof globalThis & { __dedupHealthConfig?: unknown };
const g = globalThis as G;
const savedConfig = g.__dedupHealthConfig;

let srv: OwnRedis;
let admin: Redis;
let client: RedisLike;

beforeAll(async () => {
  srv = await startOwnRedis();
  admin = new Redis(srv.url);
  // The handler is sparse in the keyspace: a page takes several SCAN calls of the shared budget.
  await seedKeys(admin, [
    { prefix: PREFIX, count: SEEDED, ttlMs: 3_600_000 },
    { prefix: "cache:user", count: 20_000, ttlMs: null },
  ]);
  g.__dedupHealthConfig = parseConfig({ REDIS_URL: srv.url });
  client = createObserveRedis({ url: srv.url });
  setObserveContext(createObserveContext({ metrics: new LocalSource(new Registry()), redis: client }));
}, 60_000);

afterAll(async () => {
  setObserveContext(null);
  g.__dedupHealthConfig = savedConfig;
  client?.disconnect();
  admin?.disconnect();
  await srv?.stop();
});

describe("GET /api/keys paged by one viewer", () => {
  it("every page is a 200 until the end; every key once; the cursor names no Redis address", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q = new URLSearchParams({ prefix: PREFIX, count: "50" });
      if (cursor) q.set("cursor", cursor);
      const res = await GET(
        new Request(`http://localhost/api/keys?${q}`, {
          headers: { host: "localhost", "x-forwarded-for": "127.0.0.1" },
        }),
      );
      const text = await res.text();
      expect(res.status, `page ${pages + 1}: ${text}`).toBe(200);
      const body = keysResponseSchema.parse(JSON.parse(text));
      seen.push(...body.keys.map((k) => k.key));
      cursor = body.cursor;
      if (cursor) {
        expect(cursor).not.toContain(String(srv.port));
        expect(cursor).not.toMatch(/127\.0\.0\.1|localhost|<redis>/);
      }
      pages++;
      // A viewer reading the page before clicking Next.
      await new Promise((r) => setTimeout(r, 150));
    } while (cursor && pages < 200);
    expect(cursor).toBeNull();
    expect(seen.length).toBe(new Set(seen).size);
    expect(new Set(seen)).toEqual(new Set(Array.from({ length: SEEDED }, (_, i) => `${PREFIX}:${fakeUlid(i)}`)));
  }, 60_000);
});
