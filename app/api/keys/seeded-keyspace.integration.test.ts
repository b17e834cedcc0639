/**
 * Key inspection on a seeded keyspace in a private redis-server (random port, every command in SLOWLOG):
 * 210k dedup keys over 5 handlers, keys without TTL, unrelated keys and near misses, and
 * handler names full of glob characters. Exact counts equal the seed; the estimate falls inside
 * its stated bound; the commands the inspector and the key browser send stay inside their size
 * (SLOWLOG of every command: p99 < 3 ms, VM pauses aside); the key
 * routes never return a key outside the configured prefixes.
 */
import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as handlersGET } from "@/app/api/handlers/route";
import { GET as lookupGET } from "@/app/api/keys/lookup/route";
import { GET as keysGET } from "./route";
import { GET as capacityGET } from "@/app/api/capacity/route";
import { GET as lintGET } from "@/app/api/lint/route";
import { GET as overviewGET } from "@/app/api/overview/route";
import { capacityResponseSchema } from "@/lib/api/capacity";
import { errorBodySchema } from "@/lib/api/common";
import { handlersResponseSchema } from "@/lib/api/handlers";
import { keyLookupResponseSchema, keysResponseSchema } from "@/lib/api/keys";
import { lintResponseSchema } from "@/lib/api/lint";
import { overviewResponseSchema } from "@/lib/api/overview";
import { registerDemoHandlers } from "@/server/startup";
import { createObserveContext, setObserveContext, type ObserveContext } from "@/server/observe/context";
import { globToRegExp } from "@/server/observe/keys/glob";
import { clearDeclaredHandlers } from "@/server/observe/core/handler-registry";
import { browseKeys } from "@/server/observe/routes/keys";
import { KeyInspector, type Inspection } from "@/server/observe/keys/inspector";
import { LocalSource } from "@/server/observe/metrics/local";
import { createObserveRedis, type RedisLike } from "@/server/observe/redis/client";
import { startOwnRedis, type OwnRedis } from "@/server/testing/own-redis";
import { fakeUlid, seedKeys, type SeedGroup } from "@/server/testing/seed-keys";
import { median, percentile } from "@/scripts/lib/stats";

const H = 3_600_000;
const HANDLERS: SeedGroup[] = [
  { prefix: "notification:dedup:on-review-created", count: 60_000, ttlMs: 24 * H },
  { prefix: "notification:dedup:on-user-banned", count: 30_000, ttlMs: 7 * 24 * H },
  { prefix: "notification:dedup:on-page-viewed", count: 50_000, ttlMs: H, value: "1" },
  { prefix: "billing:dedup:charge", count: 40_000, ttlMs: 24 * H, value: "processing:0f3a" },
  { prefix: "billing:dedup:refund", count: 25_000, ttlMs: 24 * H },
  { prefix: "billing:dedup:refund", count: 5_000, ttlMs: null, offset: 1_000_000 },
];
const WEIRD: SeedGroup[] = [
  // Glob characters inside a handler name: browsing it must match literally.
  { prefix: "weird*svc:dedup:h[1]?", count: 100, ttlMs: 24 * H },
  { prefix: "weirdXsvc:dedup:h1x", count: 50, ttlMs: H / 2 },
];
const UNRELATED: SeedGroup[] = [
  { prefix: "cache:user", count: 30_000, ttlMs: H },
  { prefix: "billing:session", count: 10_000, ttlMs: null },
  { prefix: "x:dedupe:y", count: 5_000, ttlMs: H },
];
const EXPECTED = new Map<string, { count: number; noTtl: number }>();
for (const g of [...HANDLERS, ...WEIRD]) {
  const e = EXPECTED.get(g.prefix) ?? { count: 0, noTtl: 0 };
  e.count += g.count;
  if (g.ttlMs === null) e.noTtl += g.count;
  EXPECTED.set(g.prefix, e);
}
const inGlobs = globToRegExp("*:dedup:*");
/**
 * On a virtual machine a hypervisor pause adds milliseconds to whatever command Redis runs at that
 * moment, even a plain `SCAN … COUNT 500` (median 0.35 ms), so the sizing is asserted on the
 * distribution of every command the observe client sent (SLOWLOG at 0 µs), not on its few slowest.
 */
const VM_PAUSE_NOTE = "a hypervisor pause adds 3-13 ms to any command on this VM";
/**
 * The slowest script call's own server time (Redis TIME in the script) a run may show: calls are
 * sized to 1.5 ms, a VM pause lands in one now and then (10.1 and 13.3 ms measured), never a budget
 * overrun beyond that.
 */
const MAX_CALL_MICROS = 20_000;
/** Share of the observe client's commands allowed over 5 ms (pauses): 1 %. */
const PAUSED_SHARE = 0.01;
/**
 * The scans here may take half of their Redis' time: this Redis serves nothing else, and what is
 * asserted is what they count and how long each call runs, not the pacing (the 5 % default is
 * asserted on the running app in e2e/security-boundaries.e2e.test.ts).
 */
const SCAN_SHARE = { maxRedisShare: 0.5 } as const;

let srv: OwnRedis;
let admin: Redis;
let client: RedisLike;
let ctx: ObserveContext;

beforeAll(async () => {
  srv = await startOwnRedis({ realtime: true });
  admin = new Redis(srv.url);
  await seedKeys(admin, [...HANDLERS, ...WEIRD, ...UNRELATED]);
  // Every command from here on, with its duration (the seed's are not ours).
  await admin.config("SET", "slowlog-max-len", "200000");
  await admin.config("SET", "slowlog-log-slower-than", "0");
  await admin.slowlog("RESET");
  client = createObserveRedis({ url: srv.url });
  ctx = createObserveContext({
    metrics: new LocalSource(new Registry()),
    redis: client,
    inspector: { refreshMinIntervalMs: 0, ttlCheck: "every-key", ...SCAN_SHARE },
  });
  setObserveContext(ctx);
  // What start-up does when the demo runs: the dashboard knows the demo's handlers.
  await registerDemoHandlers({ mode: "real", SERVICE_NAME: "notification" });
}, 120_000);

afterAll(async () => {
  clearDeclaredHandlers();
  setObserveContext(null);
  client?.disconnect();
  admin?.disconnect();
  await srv?.stop();
});

describe("KeyInspector on 210k seeded dedup keys", () => {
  it("counts every handler exactly, with its keys without TTL, and nothing outside the prefixes", async () => {
    const r = await ctx.inspector!.run("exact");
    expect(r.mode).toBe("exact");
    const got = new Map(r.handlers.map((h) => [h.prefix, h]));
    expect([...got.keys()].sort()).toEqual([...EXPECTED.keys()].sort());
    for (const [prefix, e] of EXPECTED) {
      const h = got.get(prefix)!;
      expect({ prefix, count: h.keyCount, noTtl: h.noTtlCount, exact: h.exact, bound: h.errorBound }).toEqual({
        prefix,
        count: e.count,
        noTtl: e.noTtl,
        exact: true,
        bound: 0,
      });
      expect(h.ttlBuckets.reduce((a, b) => a + b.count, 0) + h.noTtlCount).toBe(e.count);
    }
    const banned = got.get("notification:dedup:on-user-banned")!;
    expect(banned.ttlBuckets.find((b) => b.label === "3 – 7 d")!.count).toBe(30_000);
    expect(
      got.get("notification:dedup:on-page-viewed")!.ttlBuckets.find((b) => b.label === "10 min – 1 h")!.count,
    ).toBe(50_000);
    const charge = got.get("billing:dedup:charge")!;
    expect(charge.states).toEqual({ processing: charge.sampleSize, done: 0, marked: 0, other: 0 });
    expect(charge.sampleSize).toBeGreaterThanOrEqual(400);
    // Leases apart from settled keys, with their share, in the count and in the TTL histogram.
    expect(charge.byState).toEqual({ processing: 40_000, done: 0, marked: 0, other: 0, exact: false });
    expect(charge.leaseShare).toBe(1);
    expect(charge.ttlBuckets.find((b) => b.label === "6 – 24 h")!.processing).toBe(40_000);
    const created = got.get("notification:dedup:on-review-created")!;
    expect(created.byState.done).toBe(60_000);
    expect(created.leaseShare).toBe(0);
    expect(created.ttlBuckets.every((b) => b.processing === 0)).toBe(true);
    // Fresh keys of a 24 h window: the oldest settled key has almost all of its TTL left.
    expect(created.settledMinTtlMs!).toBeGreaterThan(24 * H - 10 * 60_000);
    const viewed = got.get("notification:dedup:on-page-viewed")!;
    expect(viewed.states.marked).toBe(viewed.sampleSize);
    expect(got.get("billing:dedup:refund")!.noTtlExact).toBe(true);
    expect(banned.bytesPerKey).toBeGreaterThan(50);
    expect(banned.ttlObserved!.maxMs).toBeGreaterThan(7 * 24 * H - 120_000);
    expect(banned.service).toBe("notification");
    expect(banned.handler).toBe("on-user-banned");
    expect(r.maxCallMicros).toBeLessThan(MAX_CALL_MICROS);
  });

  it("with the sampled TTL check (ttlCheck: sample): counts stay exact, no-TTL keys are scaled from the sample", async () => {
    const sampled = new KeyInspector(client, { prefixes: ["*:dedup:*"], ttlCheck: "sample", ...SCAN_SHARE });
    const r = await sampled.run("exact");
    for (const [prefix, e] of EXPECTED) {
      const h = r.handlers.find((x) => x.prefix === prefix)!;
      expect(h.keyCount).toBe(e.count);
      expect(h.ttlSampled).toBe(true);
      expect(h.noTtlExact).toBe(false); // billing:session keys lack a TTL, so INFO keyspace cannot prove 0
      const n = h.sampleSize;
      const p = e.noTtl / e.count;
      expect(Math.abs(h.noTtlCount - e.noTtl), prefix).toBeLessThanOrEqual(
        Math.ceil(3.29 * Math.sqrt((p * (1 - p)) / n) * e.count) + 1,
      );
    }
    const banned = r.handlers.find((x) => x.prefix === "notification:dedup:on-user-banned")!;
    expect(banned.ttlBuckets.find((b) => b.label === "3 – 7 d")!.count).toBe(30_000);
    expect(banned.sampleSize).toBeGreaterThanOrEqual(400);
    expect(r.maxCallMicros).toBeLessThan(MAX_CALL_MICROS);
  });

  it("counts keys without TTL exactly by default: a handler with 1,000 keys, 37 without TTL → 37", async () => {
    const db2 = new Redis(`${srv.url}/2`);
    const c2 = createObserveRedis({ url: `${srv.url}/2` });
    try {
      await seedKeys(db2, [
        { prefix: "leaky:dedup:h", count: 963, ttlMs: 24 * H },
        { prefix: "leaky:dedup:h", count: 37, ttlMs: null, offset: 10_000 },
        { prefix: "leaky:dedup:clean", count: 2000, ttlMs: H },
      ]);
      const r = await new KeyInspector(c2, SCAN_SHARE).run("exact");
      const by = new Map(r.handlers.map((h) => [h.prefix, h]));
      expect(by.get("leaky:dedup:h")).toMatchObject({ keyCount: 1000, noTtlCount: 37, noTtlExact: true, exact: true });
      expect(by.get("leaky:dedup:clean")).toMatchObject({ keyCount: 2000, noTtlCount: 0, noTtlExact: true });
      // The TTLs came with the scan: buckets add up with the no-TTL keys to the count.
      expect(by.get("leaky:dedup:h")!.ttlSampled).toBe(false);
      expect(by.get("leaky:dedup:h")!.ttlBuckets.find((b) => b.label === "6 – 24 h")!.count).toBe(963);
      // The estimate scales from its sample and says so.
      const e = await new KeyInspector(c2, SCAN_SHARE).run("estimate");
      expect(e.handlers.find((h) => h.prefix === "leaky:dedup:h")?.noTtlExact ?? false).toBe(false);
      expect(r.maxCallMicros).toBeLessThan(MAX_CALL_MICROS);
    } finally {
      await db2.flushdb(); // our own private server's db 2
      db2.disconnect();
      c2.disconnect();
    }
  });

  it("proves 'no key without TTL' exactly from INFO keyspace when the database has none", async () => {
    const db1 = new Redis(`${srv.url}/1`);
    const c1 = createObserveRedis({ url: `${srv.url}/1` });
    try {
      await seedKeys(db1, [{ prefix: "clean:dedup:h", count: 2000, ttlMs: 24 * H }]);
      const r = await new KeyInspector(c1, SCAN_SHARE).run("exact");
      expect(r.handlers.map((h) => [h.prefix, h.keyCount, h.noTtlCount, h.noTtlExact])).toEqual([
        ["clean:dedup:h", 2000, 0, true],
      ]);
      await db1.set("clean:dedup:h:forever", "done");
      const r2 = await new KeyInspector(c1, { ttlCheck: "every-key", ...SCAN_SHARE }).run("exact");
      expect(r2.handlers[0]!.noTtlCount).toBe(1);
    } finally {
      await db1.flushdb(); // our own private server's db 1
      db1.disconnect();
      c1.disconnect();
    }
  });

  it("answers the same whether the keys are counted by SCAN from the client or by the per-key TTL script", async () => {
    const db3 = new Redis(`${srv.url}/3`);
    const c3 = createObserveRedis({ url: `${srv.url}/3` });
    // ≤ 500 keys per handler: the client's samples hold every key, so its sampled TTL buckets are counts.
    const groups: SeedGroup[] = [
      { prefix: "same:dedup:a", count: 480, ttlMs: 24 * H },
      { prefix: "same:dedup:b", count: 300, ttlMs: H / 2, value: "processing:0f3a" },
      { prefix: "same:dedup:b", count: 150, ttlMs: 5 * 24 * H, offset: 10_000 },
      { prefix: "other:dedup:c", count: 7, ttlMs: 6 * 60_000, value: "1" },
      { prefix: "same:dedupe:near-miss", count: 200, ttlMs: H },
    ];
    const view = (r: Inspection) =>
      r.handlers.map((h) => ({
        prefix: h.prefix,
        count: h.keyCount,
        noTtl: h.noTtlCount,
        noTtlExact: h.noTtlExact,
        exact: h.exact,
        buckets: h.ttlBuckets.map((b) => b.count),
      }));
    try {
      await seedKeys(db3, groups);
      for (const prefixes of [["*:dedup:*"], ["same:dedup:*", "other:dedup:c*"]]) {
        // Every key has a TTL (INFO keyspace keys == expires): counted from the client.
        const byClient = await new KeyInspector(c3, { prefixes, ...SCAN_SHARE }).run("exact");
        // One key without TTL, outside the globs: now every matched key's TTL is read in the script.
        await db3.set("unrelated:forever", "x");
        const byScript = await new KeyInspector(c3, { prefixes, ...SCAN_SHARE }).run("exact");
        await db3.del("unrelated:forever");
        expect(
          byScript.handlers.every((h) => !h.ttlSampled),
          "the second run read every key's TTL",
        ).toBe(true);
        expect(
          byClient.handlers.every((h) => h.ttlSampled),
          "the first run read no TTL in its scan",
        ).toBe(true);
        expect(view(byClient), prefixes.join(" ")).toEqual(view(byScript));
        expect(view(byClient).map((h) => [h.prefix, h.count])).toEqual([
          ["other:dedup:c", 7],
          ["same:dedup:a", 480],
          ["same:dedup:b", 450],
        ]);
      }
    } finally {
      await db3.flushdb(); // our own private server's db 3
      db3.disconnect();
      c3.disconnect();
    }
  });

  it("estimates each handler within its stated bound", async () => {
    const t0 = Date.now();
    const r = await ctx.inspector!.run("estimate");
    const ms = Date.now() - t0;
    expect(r.mode).toBe("estimate");
    for (const g of HANDLERS.slice(0, 5)) {
      const h = r.handlers.find((x) => x.prefix === g.prefix)!;
      const truth = EXPECTED.get(g.prefix)!.count;
      expect(h.exact).toBe(false);
      expect(h.errorBound).toBeGreaterThan(0);
      expect(
        Math.abs(h.keyCount - truth),
        `${g.prefix}: ${h.keyCount} ± ${h.errorBound} vs ${truth}`,
      ).toBeLessThanOrEqual(h.errorBound);
      // The bound is useful, not a shrug: 3.29·√(p(1-p)/n)/p at 40k draws is ≤ 4.6% for shares ≥ 11%.
      expect(h.errorBound / truth).toBeLessThan(0.05);
    }
    // Keys without TTL: scaled from the handler's sample (n keys), on top of the count's own bound.
    const refund = r.handlers.find((x) => x.prefix === "billing:dedup:refund")!;
    const p = 5000 / 30_000;
    const sampleBound = 3.29 * Math.sqrt((p * (1 - p)) / refund.sampleSize) * 30_000;
    expect(refund.sampleSize).toBeGreaterThanOrEqual(100);
    expect(Math.abs(refund.noTtlCount - 5000)).toBeLessThanOrEqual(refund.errorBound + sampleBound);
    expect(ms).toBeLessThan(2000);
  });

  it("pages through one handler with a resumable cursor, every key once, never a key of another prefix", async () => {
    const seen = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await browseKeys(ctx, { prefix: "notification:dedup:on-user-banned", cursor, count: 500 });
      pages++;
      for (const k of page.keys) {
        expect(k.key.startsWith("notification:dedup:on-user-banned:")).toBe(true);
        expect(k.state).toBe("done");
        expect(k.ttlMs).toBeGreaterThan(6 * 24 * H);
        seen.add(k.key);
      }
      cursor = page.cursor ?? undefined;
    } while (cursor && pages < 1000);
    expect(seen.size).toBe(30_000);
  });

  it("matches glob characters in a prefix literally", async () => {
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await browseKeys(ctx, { prefix: "weird*svc:dedup:h[1]?", cursor, count: 200 });
      keys.push(...page.keys.map((k) => k.key));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(keys).toHaveLength(100);
    expect(keys.every((k) => k.startsWith("weird*svc:dedup:h[1]?:"))).toBe(true);
  });

  it("its commands are sized to ~1.5 ms: p99 under 3 ms, at most 1 % over 5 ms (VM pauses)", async () => {
    const log = (await admin.slowlog("GET", -1)) as Array<[number, number, number, string[], string, string]>;
    const ours = log
      .filter((e) => e[5] === "dedup-health-observe")
      .map((e) => ({ us: e[2], cmd: e[3].slice(0, 6).join(" ") }));
    expect(ours.length).toBeGreaterThan(500);
    const us = ours.map((e) => e.us);
    const slow = ours.filter((e) => e.us > 5_000);
    console.log(
      `[slowlog] ${ours.length} commands: median ${median(us)} µs, p99 ${percentile(us, 99)} µs, max ${percentile(us, 100)} µs; over 5 ms: ${slow.map((e) => `${e.us} µs ${e.cmd}`).join("; ") || "none"} (${VM_PAUSE_NOTE})`,
    );
    // Calls are sized to ~1.5 ms (maxCallMicros; SCAN COUNT ≤ 500 ≈ 0.35 ms): a fixed COUNT 1000 in
    // the inspector put a tenth of all calls over 3 ms even on an idle machine; that fails here.
    expect(percentile(us, 99)).toBeLessThan(3_000);
    expect(slow.length, slow.map((e) => `${e.us} µs ${e.cmd}`).join("; ")).toBeLessThanOrEqual(
      Math.max(2, Math.ceil(ours.length * PAUSED_SHARE)),
    );
  });
});

describe("key routes against the seeded Redis", () => {
  const HOSTILE_PREFIXES = [
    "*",
    "*:dedup:*",
    "cache",
    "cache:user",
    "billing:session",
    "\\",
    "[a-z]*",
    "?",
    "x:dedupe",
    "notification:dedup:*",
    "../../",
    "ü🦄",
    "billing:dedup:refund\u0000",
    "%",
  ];

  it("never returns a key outside DEDUP_PREFIXES or outside the literal prefix", async () => {
    for (const p of HOSTILE_PREFIXES) {
      let cursor: string | undefined;
      let pages = 0;
      do {
        const qs = new URLSearchParams({ prefix: p, count: "500", ...(cursor ? { cursor } : {}) });
        const res = await keysGET(new Request(`http://localhost/api/keys?${qs}`));
        expect(res.status, `prefix ${JSON.stringify(p)}`).toBeLessThan(500);
        const body = (await res.json()) as unknown;
        if (res.status >= 400) {
          expect(errorBodySchema.parse(body).error).toBe("bad_request");
          break;
        }
        const page = keysResponseSchema.parse(body);
        for (const k of page.keys) {
          expect(inGlobs.test(k.key), k.key).toBe(true);
          expect(k.key.startsWith(`${p}:`), `${k.key} under ${p}`).toBe(true);
        }
        cursor = page.cursor ?? undefined;
        pages++;
      } while (cursor && pages < 3);
    }
  });

  it("rejects forged cursors with 400", async () => {
    for (const c of [
      "abc",
      "127.0.0.1:1@5",
      `127.0.0.1:${srv.port}@-1`,
      `127.0.0.1:${srv.port}@99999999999999999999999`,
      "@@@",
      "|",
    ]) {
      const res = await keysGET(
        new Request(`http://localhost/api/keys?prefix=billing:dedup:charge&cursor=${encodeURIComponent(c)}`),
      );
      expect(res.status, c).toBe(400);
    }
  });

  it("looks one UUID up across all handlers", async () => {
    const uuid = fakeUlid(7);
    const res = await lookupGET(new Request(`http://localhost/api/keys/lookup?uuid=${uuid}`));
    expect(res.status).toBe(200);
    const body = keyLookupResponseSchema.parse(await res.json());
    expect(body.matches.map((m) => m.prefix).sort()).toEqual([...EXPECTED.keys()].sort());
    const charge = body.matches.find((m) => m.handler === "charge")!;
    expect(charge.state).toBe("processing");
    const missing = keyLookupResponseSchema.parse(
      await (await lookupGET(new Request("http://localhost/api/keys/lookup?uuid=01JZZZZZZZZZZZZZZZZZZZZZZZ"))).json(),
    );
    expect(missing.matches).toEqual([]);
  });

  it("a prefix newer than the last inspection is found when the key browser passes it; one outside DEDUP_PREFIXES never is", async () => {
    const uuid = "01JKATEPREFX00000000000001";
    const late = `billing:dedup:late-${Date.now().toString(36)}`;
    await admin.set(`${late}:${uuid}`, "done", "PX", 60_000);
    await admin.set(`cache:user:${uuid}`, "done", "PX", 60_000);
    try {
      const look = async (extra = "") => {
        const res = await lookupGET(new Request(`http://localhost/api/keys/lookup?uuid=${uuid}${extra}`));
        expect(res.status).toBe(200);
        return keyLookupResponseSchema.parse(await res.json());
      };
      expect((await look()).matches).toEqual([]); // not inspected yet: unknown prefix
      const hinted = await look(`&prefix=${encodeURIComponent(late)}`);
      expect(hinted.matches.map((m) => [m.key, m.state, m.handler])).toEqual([
        [`${late}:${uuid}`, "done", late.split(":")[2]],
      ]);
      // A hint outside the configured globs is not checked: the lookup never reads outside them.
      const outside = await look(`&prefix=${encodeURIComponent("cache:user")}`);
      expect(outside.matches).toEqual([]);
      expect(
        (
          await lookupGET(
            new Request(`http://localhost/api/keys/lookup?uuid=${uuid}&prefix=${encodeURIComponent("a\u0001b")}`),
          )
        ).status,
      ).toBe(400);
    } finally {
      await admin.del(`${late}:${uuid}`, `cache:user:${uuid}`);
    }
  });

  it("handlers, capacity and lint answer from the inspection: no-TTL keys flagged", async () => {
    const h = handlersResponseSchema.parse(
      await (await handlersGET(new Request("http://localhost/api/handlers"))).json(),
    );
    expect(h.store.status).toBe("up");
    expect(h.noTtlTotal).toBeGreaterThan(0);
    const cap = capacityResponseSchema.parse(
      await (await capacityGET(new Request("http://localhost/api/capacity"))).json(),
    );
    const refund = cap.handlers.find((x) => x.prefix === "billing:dedup:refund")!;
    expect(refund.notes.join(" ")).toMatch(/without TTL/);
    const lint = lintResponseSchema.parse(await (await lintGET(new Request("http://localhost/api/lint"))).json());
    expect(lint.observed.status).toBe("ok");
    if (lint.observed.status !== "ok") return;
    expect(
      lint.observed.handlers.find((x) => x.prefix === "billing:dedup:refund")!.findings.map((f) => f.rule),
    ).toContain("ttl-missing");
    expect(
      lint.observed.handlers.find((x) => x.prefix === "weirdXsvc:dedup:h1x")!.findings.map((f) => f.rule),
    ).toContain("ttl-below-hour");
    // 1 h keys of the demo's analytics handler (registered by start-up) are within policy.
    expect(lint.observed.handlers.find((x) => x.prefix === "notification:dedup:on-page-viewed")!.findings).toEqual([]);
  });

  it("while a recount runs, every page shows the same last completed count with its time, and the recount's progress", async () => {
    // No answer cache: each route reads the inspector at the moment it is called.
    const fresh = createObserveContext({
      metrics: new LocalSource(new Registry()),
      redis: client,
      inspector: { refreshMinIntervalMs: 0, ...SCAN_SHARE },
      answerTtlMs: 0,
    });
    setObserveContext(fresh);
    const added = "notification:dedup:on-snapshot";
    try {
      const first = await fresh.inspector!.run("exact");
      const before = first.handlers.find((h) => h.prefix === "notification:dedup:on-review-created")!;
      await seedKeys(admin, [{ prefix: added, count: 3000, ttlMs: H }]);
      expect(fresh.inspector!.refresh("exact").started).toBe(true);
      const [o, hs, cap] = await Promise.all([
        overviewGET(new Request("http://localhost/api/overview")).then(async (r) =>
          overviewResponseSchema.parse(await r.json()),
        ),
        handlersGET(new Request("http://localhost/api/handlers")).then(async (r) =>
          handlersResponseSchema.parse(await r.json()),
        ),
        capacityGET(new Request("http://localhost/api/capacity")).then(async (r) =>
          capacityResponseSchema.parse(await r.json()),
        ),
      ]);
      expect(fresh.inspector!.busy).toBe(true);
      const row = o.handlers.find((h) => h.handler === "on-review-created" && h.service === "notification")!;
      const hk = hs.handlers.find((h) => h.prefix === before.prefix)!;
      const ck = cap.handlers.find((h) => h.prefix === before.prefix)!;
      const countedAt = new Date(first.finishedAt).toISOString();
      expect(row.keys.status === "ok" && { count: row.keys.count, at: row.keys.countedAt }).toEqual({
        count: before.keyCount,
        at: countedAt,
      });
      expect({ count: hk.keyCount, at: hk.countedAt }).toEqual({ count: before.keyCount, at: countedAt });
      expect(ck.measured.status === "ok" && { count: ck.measured.keys, at: ck.measured.countedAt }).toEqual({
        count: before.keyCount,
        at: countedAt,
      });
      // The running recount shows as progress, not as partial key counts.
      expect(row.keys.status === "ok" && row.keys.recount).toEqual(expect.any(Number));
      expect(hs.handlers.some((h) => h.prefix === added)).toBe(false);
      expect(hs.scan.done).toBe(false);
      const second = await fresh.inspector!.run();
      expect(second.handlers.find((h) => h.prefix === added)!.keyCount).toBe(3000);
      const after = overviewResponseSchema.parse(
        await (await overviewGET(new Request("http://localhost/api/overview"))).json(),
      );
      const snap = after.handlers.find((h) => h.handler === "on-snapshot")!;
      expect(
        snap.keys.status === "ok" && { count: snap.keys.count, recount: snap.keys.recount, at: snap.keys.countedAt },
      ).toEqual({
        count: 3000,
        recount: null,
        at: new Date(second.finishedAt).toISOString(),
      });
    } finally {
      setObserveContext(ctx);
      await admin.del(...Array.from({ length: 3000 }, (_, i) => `${added}:${fakeUlid(i)}`));
    }
  });

  it("refresh=1 is rate-limited while a scan runs and says when to retry", async () => {
    const a = handlersResponseSchema.parse(
      await (await handlersGET(new Request("http://localhost/api/handlers?refresh=1"))).json(),
    );
    const b = handlersResponseSchema.parse(
      await (await handlersGET(new Request("http://localhost/api/handlers?refresh=1"))).json(),
    );
    expect(a.refresh.started).toBe(true);
    expect(b.refresh.started).toBe(false);
    expect(b.refresh.retryAfterMs).toBeGreaterThan(0);
    expect(b.scan.done).toBe(false);
    expect(b.scan.total).toBeGreaterThan(250_000);
    await ctx.inspector!.run();
  });
});

describe("Redis down", () => {
  it("the key routes answer 503 {error, detail} at once and the inspector reports the error", async () => {
    const dead = createObserveRedis({ url: "redis://127.0.0.1:1" }, { connectTimeoutMs: 200 });
    const down = createObserveContext({ metrics: new LocalSource(new Registry()), redis: dead });
    setObserveContext(down);
    try {
      const t0 = Date.now();
      const res = await keysGET(new Request("http://localhost/api/keys?prefix=a:dedup:b"));
      expect(res.status).toBe(503);
      expect(errorBodySchema.parse(await res.json()).error).toBe("unavailable");
      await expect(down.inspector!.run()).rejects.toThrow();
      const h = handlersResponseSchema.parse(
        await (await handlersGET(new Request("http://localhost/api/handlers"))).json(),
      );
      expect(h.store.status).toBe("down");
      const t1 = Date.now();
      const ov = await overviewGET(new Request("http://localhost/api/overview"));
      expect(ov.status).toBe(200);
      const o = overviewResponseSchema.parse(await ov.json());
      expect(o.upstream.store.status).toBe("down");
      expect(o.handlers.length).toBeGreaterThan(0); // the demo handlers, registered by start-up
      expect(o.handlers.every((x) => x.keys.status === "unavailable")).toBe(true);
      expect(o.alerts.status).toBe("ok"); // the metrics side still answers
      expect(Date.now() - t1).toBeLessThan(1500);
      expect(Date.now() - t0).toBeLessThan(6000);
    } finally {
      setObserveContext(ctx);
      dead.disconnect();
    }
  });
});
