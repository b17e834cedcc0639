/**
 * Embedded mode's key routes when the inspector comes from another copy of the observe modules — as
 * in `next start`, where `instrumentation.ts` builds the process's context (kept on `globalThis`) and
 * each route bundle loads its own `server/observe/keys/memory-inspector.ts`: `/api/keys` and `/api/keys/lookup` must
 * page and look up through the KeySource surface, not by class (the e2e run got 503
 * "redis: not configured" while `/api/handlers` said `storeKind: "memory"`).
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as lookupGET } from "@/app/api/keys/lookup/route";
import { GET as keysGET } from "./route";
import { keyLookupResponseSchema, keysResponseSchema } from "@/lib/api/keys";
import { MemoryRepository } from "@/server/dedup";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { LocalSource } from "@/server/observe/metrics/local";
import { MemoryInspector, estimateBytes } from "@/server/observe/keys/memory-inspector";

const PREFIX = "notification:dedup:on-review-created";
const HOUR = 3_600_000;
const repo = new MemoryRepository();
/** Written in shuffled order, so key order is not insertion order. */
const uuids = Array.from(
  { length: 95 },
  (_, i) => `0190a0b0-0000-7000-8000-${String((i * 37) % 95).padStart(12, "0")}`,
);
let justProcessed = "";

beforeAll(async () => {
  for (const [i, u] of uuids.entries()) {
    // What the middleware writes: a lease, then `done` with the handler's TTL (every 10th is still leased).
    await repo.claim(`${PREFIX}:${u}`, `processing:t${i}`, 30_000);
    if (i % 10 !== 0) await repo.markDone(`${PREFIX}:${u}`, "done", 24 * HOUR);
  }
  await repo.claim("notification:dedup:on-page-viewed:a", "processing:x", 30_000);
  justProcessed = "0190a0b0-ffff-7000-8000-000000000001";
  await repo.claim(`${PREFIX}:${justProcessed}`, "processing:last", 30_000);
  await repo.markDone(`${PREFIX}:${justProcessed}`, "done", 24 * HOUR);
  // A separate module registry: its MemoryInspector is a different class from the routes' copy.
  vi.resetModules();
  const other =
    (await import("@/server/observe/keys/memory-inspector")) as typeof import("@/server/observe/keys/memory-inspector");
  expect(other.MemoryInspector).not.toBe(MemoryInspector);
  const ctx = createObserveContext({ metrics: new LocalSource(new Registry()), redis: null, mode: "embedded" });
  ctx.inspector = new other.MemoryInspector(() => [repo]);
  setObserveContext(ctx);
});

afterAll(() => setObserveContext(null));

async function json(res: Response): Promise<unknown> {
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe("embedded key routes through the KeySource surface (inspector from another module copy)", () => {
  it("/api/keys pages the prefix in key order with a cursor: every key once, state, TTL and an estimated size", async () => {
    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | null = null;
    do {
      const qs = new URLSearchParams({ prefix: PREFIX, count: "20", ...(cursor ? { cursor } : {}) });
      const page = keysResponseSchema.parse(await json(await keysGET(new Request(`http://localhost/api/keys?${qs}`))));
      pages.push(page.keys.length);
      for (const k of page.keys) {
        seen.push(k.key);
        expect(k.bytesEstimated, k.key).toBe(true);
        expect(k.bytes).toBe(estimateBytes(k.key, repo.get(k.key)!));
        expect(k.uuid).toBe(k.key.slice(PREFIX.length + 1));
        if (repo.get(k.key) === "done") {
          expect(k.state).toBe("done");
          expect(k.ttlMs).toBeGreaterThan(23 * HOUR);
        } else {
          expect(k.state).toBe("processing");
          expect(k.ttlMs).toBeLessThanOrEqual(30_000);
        }
      }
      cursor = page.cursor;
    } while (cursor);
    const want = [...uuids, justProcessed].map((u) => `${PREFIX}:${u}`).sort();
    expect(pages).toEqual([20, 20, 20, 20, 16]);
    expect(seen).toEqual(want); // key order, no key twice, none missing, nothing of another prefix
    const bad = await keysGET(new Request(`http://localhost/api/keys?prefix=${PREFIX}&cursor=0`));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: expect.any(String), detail: expect.stringMatching(/cursor/) });
  });

  it("/api/keys/lookup finds the UUID just processed, with its handler, state, TTL and estimated size", async () => {
    const body = keyLookupResponseSchema.parse(
      await json(await lookupGET(new Request(`http://localhost/api/keys/lookup?uuid=${justProcessed}`))),
    );
    expect(body.matches).toHaveLength(1);
    expect(body.matches[0]).toMatchObject({
      key: `${PREFIX}:${justProcessed}`,
      service: "notification",
      handler: "on-review-created",
      state: "done",
      bytesEstimated: true,
      prefix: PREFIX,
    });
    expect(body.matches[0]!.ttlMs).toBeGreaterThan(23 * HOUR);
    expect(body.checkedPrefixes).toBeGreaterThanOrEqual(2); // both counted prefixes were candidates
    const none = keyLookupResponseSchema.parse(
      await json(
        await lookupGET(new Request("http://localhost/api/keys/lookup?uuid=00000000-0000-4000-8000-000000000000")),
      ),
    );
    expect(none.matches).toEqual([]);
  });
});
