/**
 * Embedded mode's key inspection: the live demo (in-memory transport and store) writes real dedup
 * keys; `/api/handlers`, `/api/keys` and `/api/keys/lookup` read them through the same routes and
 * shapes as with Redis.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as handlersGET } from "@/app/api/handlers/route";
import { GET as lookupGET } from "@/app/api/keys/lookup/route";
import { GET as keysGET } from "./route";
import { handlersResponseSchema } from "@/lib/api/handlers";
import { keyLookupResponseSchema, keysResponseSchema } from "@/lib/api/keys";
import { MemoryRepository } from "@/server/dedup";
import { DemoService } from "@/server/demo/demo";
import { DEMO_HANDLER_SPECS } from "@/server/notification/demo-handlers";
import { MemorySideEffectStore } from "@/server/notification/side-effects";
import { MemoryTransport } from "@/server/transport";
import { createObserveContext, setObserveContext } from "@/server/observe/context";
import { TTL_BUCKETS } from "@/server/observe/keys/accum";
import { LocalSource } from "@/server/observe/metrics/local";
import type { MemoryKey } from "@/server/dedup-store";
import { MemoryInspector } from "@/server/observe/keys/memory-inspector";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const repo = new MemoryRepository();
let demo: DemoService;
const prefixOf = (h: string) => `notification:dedup:${h}`;

beforeAll(async () => {
  const registry = new Registry();
  demo = new DemoService({
    transport: new MemoryTransport(),
    repository: repo,
    store: new MemorySideEffectStore(() => {}),
    service: "notification",
    registry,
    ratePerSec: 200,
    commitIntervalMs: 200,
  });
  setObserveContext(
    createObserveContext({ metrics: new LocalSource(registry), redis: null, memory: () => [repo], mode: "embedded" }),
  );
  await demo.start();
  const end = Date.now() + 10_000;
  await sleep(1500);
  while (
    Date.now() < end &&
    DEMO_HANDLER_SPECS.some((h) => ![...repo.entries()].some((e) => e.key.startsWith(`${prefixOf(h.name)}:`)))
  )
    await sleep(100);
}, 20_000);

afterAll(async () => {
  await demo?.stop();
  setObserveContext(null);
});

async function json(res: Response): Promise<unknown> {
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe("embedded mode: the in-memory store behind the key routes", () => {
  it("a key just processed is found by its UUID, with state, TTL and an estimated size", async () => {
    const last = [...repo.entries()].filter((e) => e.key.startsWith(`${prefixOf("on-review-created")}:`)).at(-1)!;
    const uuid = last.key.slice(last.key.lastIndexOf(":") + 1);
    const body = keyLookupResponseSchema.parse(
      await json(await lookupGET(new Request(`http://localhost/api/keys/lookup?uuid=${uuid}`))),
    );
    expect(body.matches.map((m) => m.key)).toEqual([last.key]);
    expect(body.matches[0]).toMatchObject({
      service: "notification",
      handler: "on-review-created",
      bytesEstimated: true,
    });
    expect(["done", "processing"]).toContain(body.matches[0]!.state);
    expect(body.matches[0]!.ttlMs).toBeGreaterThan(23 * 3_600_000);
    const none = keyLookupResponseSchema.parse(
      await json(
        await lookupGET(new Request("http://localhost/api/keys/lookup?uuid=00000000-0000-4000-8000-000000000000")),
      ),
    );
    expect(none.matches).toEqual([]);
  });

  it("stops the traffic, then: counts, states and TTL buckets equal the store's contents", async () => {
    demo.setSources({ traffic: { enabled: false } });
    await sleep(1500);
    const body = handlersResponseSchema.parse(
      await json(await handlersGET(new Request("http://localhost/api/handlers?refresh=1"))),
    );
    await sleep(200);
    const d = handlersResponseSchema.parse(await json(await handlersGET(new Request("http://localhost/api/handlers"))));
    expect(body.storeKind).toBe("memory");
    const entries = [...repo.entries()];
    for (const h of DEMO_HANDLER_SPECS) {
      const mine = entries.filter((e) => e.key.startsWith(`${prefixOf(h.name)}:`));
      const got = d.handlers.find((x) => x.prefix === prefixOf(h.name));
      expect(got, h.name).toBeDefined();
      expect(got).toMatchObject({
        keyCount: mine.length,
        exact: true,
        noTtlCount: 0,
        noTtlExact: true,
        ttlSampled: false,
        bytesEstimated: true,
      });
      expect(got!.ttlBuckets.reduce((a, b) => a + b.count, 0)).toBe(mine.length);
      // Every settled key sits in the bucket of its TTL class (written seconds ago); leases (processing) wherever their lease TTL is.
      const settled = mine.filter((e) => !e.value.startsWith("processing"));
      const bucket = TTL_BUCKETS.findIndex((b) => b.maxMs === null || h.ttlMs - 60_000 < b.maxMs);
      expect(settled.length, h.name).toBeGreaterThan(0);
      expect(
        got!.ttlBuckets[bucket]!.count - got!.ttlBuckets[bucket]!.processing,
        `${h.name}: ${JSON.stringify(got!.ttlBuckets)}`,
      ).toBe(settled.length);
      expect(got!.byState.processing).toBe(mine.length - settled.length);
      expect(got!.byState.exact).toBe(true);
      expect(got!.byState.done + got!.byState.processing + got!.byState.marked + got!.byState.other).toBe(mine.length);
      expect(got!.bytesPerKey).toBeGreaterThan(64);
    }
  });

  it("the key browser pages through each demo handler's keys, every key once", async () => {
    const entries = [...repo.entries()];
    for (const h of DEMO_HANDLER_SPECS) {
      const want = new Set(entries.filter((e) => e.key.startsWith(`${prefixOf(h.name)}:`)).map((e) => e.key));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const qs = new URLSearchParams({ prefix: prefixOf(h.name), count: "37", ...(cursor ? { cursor } : {}) });
        const page = keysResponseSchema.parse(
          await json(await keysGET(new Request(`http://localhost/api/keys?${qs}`))),
        );
        seen.push(...page.keys.map((k) => k.key));
        cursor = page.cursor;
      } while (cursor);
      expect(want.size, h.name).toBeGreaterThan(0);
      expect(seen.length, "no key twice").toBe(new Set(seen).size);
      expect(new Set(seen)).toEqual(want);
    }
    const bad = await keysGET(
      new Request("http://localhost/api/keys?prefix=notification:dedup:on-review-created&cursor=nope"),
    );
    expect(bad.status).toBe(400);
  });
});

describe("MemoryInspector on a store with known contents", () => {
  it("counts keys without TTL exactly, ignores keys outside the globs, resumes after a deleted key", async () => {
    const now = Date.now();
    const keys: MemoryKey[] = [
      ...Array.from({ length: 963 }, (_, i) => ({
        key: `svc:dedup:h:k${i}`,
        value: "done",
        expiresAt: now + 3_600_000 * 2,
      })),
      ...Array.from({ length: 37 }, (_, i) => ({ key: `svc:dedup:h:n${i}`, value: "processing:t", expiresAt: null })),
      { key: "cache:user:1", value: "x", expiresAt: null },
    ];
    const map = new Map(keys.map((k) => [k.key, k]));
    const store = {
      entries: () => map.values(),
      get: (k: string) => map.get(k)?.value ?? null,
      pttl: (k: string) =>
        map.has(k) ? (map.get(k)!.expiresAt === null ? -1 : map.get(k)!.expiresAt! - Date.now()) : -2,
    };
    const ins = new MemoryInspector(() => [store]);
    const r = await ins.run();
    expect(r.handlers.map((h) => [h.prefix, h.keyCount, h.noTtlCount, h.noTtlExact])).toEqual([
      ["svc:dedup:h", 1000, 37, true],
    ]);
    expect(r.handlers[0]!.ttlBuckets.find((b) => b.label === "1 – 6 h")!.count).toBe(963);
    expect(r.handlers[0]!.byState).toMatchObject({ processing: 37, done: 963, exact: true });
    const p1 = ins.browse({ prefix: "svc:dedup:h", count: 500 });
    map.delete(p1.keys.at(-1)!.key); // the cursor's key vanishes (expired) before the next page
    const p2 = ins.browse({ prefix: "svc:dedup:h", cursor: p1.cursor!, count: 500 });
    const all = [...p1.keys, ...p2.keys].map((k) => k.key);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(1000);
    expect(p2.cursor).toBeNull();
    expect(p2.keys.find((k) => k.key === "svc:dedup:h:n0")?.ttlMs).toBe(-1);
  });
});
