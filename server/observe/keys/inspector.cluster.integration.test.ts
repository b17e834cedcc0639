/**
 * The key inspector and the key browser on a REAL 3-master Redis Cluster, through the
 * app's own client (`createObserveRedis({ clusterNodes })`):
 * - exact counts scan every master (a handler whose keys all live on ONE master is counted in full);
 * - the estimate samples keys (blocks from random SCAN cursors) on every master in proportion to its
 *   DBSIZE and lands within its own error bound;
 * - keys without TTL are counted exactly (1,000 keys, 37 without TTL → 37);
 * - the browser's composite cursor walks every master, returns each key once, and resumes from the
 *   cursor string alone on a new connection.
 * Keys are seeded under a random service name across the slots (and with a hash tag on one master).
 *
 * Needs `npm run stack:cluster`; without it every test fails with that instruction.
 */
import { randomBytes } from "node:crypto";
import { Cluster } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLAIMED_PREFIX } from "@/server/dedup";
import { createObserveContext } from "../context";
import { browseKeys, lookupKey as browseLookup } from "../routes/keys";
import { KeyInspector } from "./inspector";
import { LocalSource } from "../metrics/local";
import { createObserveRedis, type RedisLike } from "../redis/client";
import { clusterNodes, deletePrefix, usableCluster } from "@/server/testing/redis-cluster";
import { parseCommandStats } from "../watchers/redis-command-time";

/** The app's observe client on the cluster, ready, or the instruction to start the cluster. */
async function observeCluster(): Promise<Cluster> {
  const nodes = clusterNodes();
  return usableCluster(createObserveRedis({ clusterNodes: nodes }, { commandTimeoutMs: 5_000 }) as Cluster, nodes);
}

const addr = (n: { options: { host?: string; port?: number } }) => `${n.options.host}:${n.options.port}`;

/** Per master: calls of `cmd` so far (INFO commandstats counts commands run inside scripts too). */
async function commandCalls(c: Cluster, cmd: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const n of c.nodes("master"))
    out.set(addr(n), parseCommandStats(await n.info("commandstats")).get(cmd)?.calls ?? 0);
  return out;
}

async function deleteService(c: Cluster, service: string): Promise<void> {
  await deletePrefix(c, `${service}:`);
}

let client: Cluster | undefined;
let clusterError: Error | null = null;
const service = `t${randomBytes(4).toString("hex")}`;
const P = {
  spread: `${service}:dedup:spread`,
  pinned: `${service}:dedup:pinned`,
  noTtl: `${service}:dedup:nottl`,
  outside: `${service}:other:x`,
};
const N = { spread: 3000, pinned: 2000, noTtl: 150, outside: 500 };
let pinnedMaster = "";
const seeded = new Map<string, string[]>();

beforeAll(async () => {
  try {
    client = await observeCluster();
  } catch (e) {
    clusterError = e as Error;
    return;
  }
  const c = client;
  // A hash tag whose slot is served by the second master: every `pinned` key lives there.
  const ranges = (await c.cluster("SLOTS")) as unknown as Array<[number, number, [string, number]]>;
  const second = [...ranges].sort((a, b) => a[0] - b[0])[1]!;
  let tag = "";
  for (let j = 0; !tag; j++) {
    const slot = Number(await c.cluster("KEYSLOT", `pin${j}`));
    if (slot >= second[0] && slot <= second[1]) tag = `pin${j}`;
  }
  pinnedMaster = `${second[2][0]}:${second[2][1]}`;
  const id = (i: number) =>
    `01JD8X3Q${randomBytes(9).toString("hex").toUpperCase().slice(0, 14)}${String(i).padStart(4, "0")}`;
  seeded.set(
    P.spread,
    Array.from({ length: N.spread }, (_, i) => `${P.spread}:${id(i)}`),
  );
  seeded.set(
    P.pinned,
    Array.from({ length: N.pinned }, (_, i) => `${P.pinned}:{${tag}}${id(i)}`),
  );
  seeded.set(
    P.noTtl,
    Array.from({ length: N.noTtl }, (_, i) => `${P.noTtl}:${id(i)}`),
  );
  seeded.set(
    P.outside,
    Array.from({ length: N.outside }, (_, i) => `${P.outside}:${id(i)}`),
  );
  const writes: Array<Promise<unknown>> = [];
  for (const [prefix, keys] of seeded) {
    for (const k of keys)
      writes.push(
        prefix === P.noTtl ? c.set(k, "done") : c.set(k, k.length % 2 ? "done" : "processing:tok", "PX", 3_600_000),
      );
    if (writes.length > 2000) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
}, 60_000);

afterAll(async () => {
  if (client) await deleteService(client, service);
  client?.disconnect();
});
beforeEach(() => {
  if (clusterError) throw clusterError;
});

const globs = [`${service}:dedup:*`];

describe("key inspector on a 3-master Redis Cluster", () => {
  it("the seed really spans the masters: spread keys on all three, pinned keys on one", async () => {
    const c = client!;
    const per = new Map<string, { spread: number; pinned: number }>();
    for (const n of c.nodes("master")) {
      const count = async (match: string) => {
        let cursor = "0";
        let k = 0;
        do {
          const [next, keys] = await n.scan(cursor, "MATCH", match, "COUNT", 1000);
          cursor = next;
          k += keys.length;
        } while (cursor !== "0");
        return k;
      };
      per.set(addr(n), { spread: await count(`${P.spread}:*`), pinned: await count(`${P.pinned}:*`) });
    }
    expect([...per.values()].every((v) => v.spread > N.spread / 6)).toBe(true);
    expect(per.get(pinnedMaster)?.pinned).toBe(N.pinned);
  });

  it("exact counts scan every master: each handler counted in full, keys outside the globs ignored", async () => {
    const c = client!;
    const inspector = new KeyInspector(c as RedisLike, { prefixes: globs, refreshMinIntervalMs: 0 });
    const sizes = await Promise.all(c.nodes("master").map((n) => n.dbsize()));
    const r = await inspector.run("exact");
    expect(r.mode).toBe("exact");
    const by = new Map(r.handlers.map((h) => [h.prefix, h]));
    expect([...by.keys()].sort()).toEqual([P.noTtl, P.pinned, P.spread].sort());
    expect(by.get(P.spread)!.keyCount).toBe(N.spread);
    expect(by.get(P.pinned)!.keyCount, "a handler living on one master only").toBe(N.pinned);
    expect(by.get(P.noTtl)!.keyCount).toBe(N.noTtl);
    expect(by.get(P.noTtl)!.noTtlCount).toBe(N.noTtl);
    expect(by.get(P.spread)!.noTtlCount).toBe(0);
    // TTLs were 1 h at seeding: all in the "10 min – 1 h" bucket.
    expect(by.get(P.spread)!.ttlBuckets.find((b) => b.label === "10 min – 1 h")!.count).toBe(N.spread);
    expect(r.total, "DBSIZE summed over the masters").toBeGreaterThanOrEqual(sizes.reduce((a, b) => a + b, 0) - 50);
    expect(r.total).toBeGreaterThanOrEqual(N.spread + N.pinned + N.noTtl + N.outside);
    // Sample reads (value, MEMORY USAGE) ran on the master of each sampled key.
    expect(by.get(P.pinned)!.sampleSize).toBeGreaterThan(0);
    expect(by.get(P.pinned)!.bytesPerKey).toBeGreaterThan(0);
  });

  it("counting by SCAN from the client (no TTL read) walks every master too: the same counts as the script", async () => {
    const c = client!;
    const byScript = await new KeyInspector(c as RedisLike, { prefixes: globs, refreshMinIntervalMs: 0 }).run("exact");
    const byClient = await new KeyInspector(c as RedisLike, {
      prefixes: globs,
      refreshMinIntervalMs: 0,
      ttlCheck: "sample",
    }).run("exact");
    const counts = (r: typeof byScript) => r.handlers.map((h) => [h.prefix, h.keyCount]);
    expect(counts(byClient)).toEqual(counts(byScript));
    expect(
      new Map(counts(byClient) as Array<[string, number]>).get(P.pinned),
      "a handler living on one master only",
    ).toBe(N.pinned);
    expect(
      byClient.handlers.find((h) => h.prefix === P.pinned)!.bytesPerKey,
      "samples read on the key's master",
    ).toBeGreaterThan(0);
  });

  it("the estimate draws on every master in proportion to its DBSIZE and lands within its error bound", async () => {
    const c = client!;
    const samples = 2_000;
    const inspector = new KeyInspector(c as RedisLike, {
      prefixes: globs,
      refreshMinIntervalMs: 0,
      estimateSamples: samples,
    });
    const sizes = new Map(await Promise.all(c.nodes("master").map(async (n) => [addr(n), await n.dbsize()] as const)));
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    const before = await commandCalls(c, "scan");
    const r = await inspector.run("estimate");
    const after = await commandCalls(c, "scan");
    expect(r.mode).toBe("estimate");
    for (const [m, size] of sizes) {
      const draws = r.drawsByMaster?.[m] ?? 0;
      const want = (samples * size) / total;
      // The blocks were really read on that master (INFO commandstats counts SCANs inside scripts).
      expect((after.get(m) ?? 0) - (before.get(m) ?? 0), `SCAN blocks on ${m}`).toBeGreaterThan(0);
      expect(draws, `keys sampled on ${m} (DBSIZE ${size} of ${total})`).toBeGreaterThan(0);
      expect(
        Math.abs(draws - want),
        `draws on ${m}: ${draws}, proportional share ${want.toFixed(0)}`,
      ).toBeLessThanOrEqual(0.1 * want + 10);
    }
    const by = new Map(r.handlers.map((h) => [h.prefix, h]));
    for (const [prefix, truth] of [
      [P.spread, N.spread],
      [P.pinned, N.pinned],
    ] as const) {
      const h = by.get(prefix);
      expect(h, prefix).toBeDefined();
      expect(h!.exact).toBe(false);
      expect(
        Math.abs(h!.keyCount - truth),
        `${prefix}: estimate ${h!.keyCount} ± ${h!.errorBound}, truth ${truth}`,
      ).toBeLessThanOrEqual(h!.errorBound);
      expect(h!.errorBound, "the bound says something").toBeLessThan(truth * 0.35);
    }
  });
});

describe("exact no-TTL count on the Cluster", () => {
  const svc = `m${randomBytes(4).toString("hex")}`;
  const prefix = `${svc}:dedup:leaky`;
  afterAll(async () => {
    if (client) await deleteService(client, svc);
  });

  it("a handler with 1,000 keys across the masters, 37 without TTL → 37, exact", async () => {
    const c = client!;
    const keys = Array.from({ length: 1000 }, (_, i) => `${prefix}:01JD8X3QLEAKY${String(i).padStart(13, "0")}`);
    await Promise.all(keys.map((k, i) => (i < 37 ? c.set(k, "done") : c.set(k, "done", "PX", 3_600_000))));
    const r = await new KeyInspector(c as RedisLike, { prefixes: [`${svc}:dedup:*`], refreshMinIntervalMs: 0 }).run(
      "exact",
    );
    expect(r.handlers.map((h) => [h.prefix, h.keyCount, h.noTtlCount, h.noTtlExact])).toEqual([
      [prefix, 1000, 37, true],
    ]);
  });
});

describe("key browser on a 3-master Redis Cluster", () => {
  const ctxFor = (redis: RedisLike) =>
    createObserveContext({ metrics: new LocalSource(new Registry()), redis, prefixes: globs });

  async function browseAll(redis: RedisLike, prefix: string, count: number, cursor?: string, maxPages = 500) {
    const keys: string[] = [];
    const cursors: string[] = [];
    let next: string | null | undefined = cursor;
    let pages = 0;
    do {
      const page = await browseKeys(ctxFor(redis), { prefix, cursor: next ?? undefined, count });
      keys.push(...page.keys.map((k) => k.key));
      next = page.cursor;
      if (next) cursors.push(next);
      pages++;
    } while (next && pages < maxPages);
    return { keys, cursors, pages };
  }

  it("walks every master: each key of a spread handler exactly once, with state and TTL", async () => {
    const { keys, cursors, pages } = await browseAll(client!, P.spread, 200);
    expect(keys.length, "no key twice").toBe(new Set(keys).size);
    expect(new Set(keys)).toEqual(new Set(seeded.get(P.spread)));
    expect(pages).toBeGreaterThan(3);
    // The composite cursor named each master while it still had keys to visit.
    const named = new Set(cursors.flatMap((cur) => cur.split("|").map((part) => part.slice(0, part.lastIndexOf("@")))));
    expect(named.size).toBe(3);
    const page = await browseKeys(ctxFor(client!), { prefix: P.spread, count: 50 });
    expect(page.keys.length).toBeGreaterThan(0);
    for (const k of page.keys) {
      expect(["done", "processing"]).toContain(k.state);
      expect(k.ttlMs).toBeGreaterThan(3_000_000);
    }
  });

  it("a handler living on one master is browsed in full; the walk over the other masters returns none of their keys", async () => {
    const { keys } = await browseAll(client!, P.pinned, 300);
    expect(keys.length).toBe(new Set(keys).size);
    expect(new Set(keys)).toEqual(new Set(seeded.get(P.pinned)));
  });

  it("resumes from the cursor string alone on a new connection, without gaps or repeats", async () => {
    const first = await browseAll(client!, P.spread, 150, undefined, 4);
    const cursor = first.cursors.at(-1);
    expect(cursor, "more pages after the fourth").toBeTruthy();
    const other = await observeCluster();
    try {
      const rest = await browseAll(other, P.spread, 150, cursor);
      const all = [...first.keys, ...rest.keys];
      expect(all.length, "no key twice across the resume").toBe(new Set(all).size);
      expect(new Set(all)).toEqual(new Set(seeded.get(P.spread)));
    } finally {
      other.disconnect();
    }
  });

  it("looks a message id up under every known handler prefix: state, TTL and size of keys on any master", async () => {
    const ctx = ctxFor(client!);
    await ctx.inspector!.run("exact"); // the lookup checks the prefixes the inspector found
    const keys = seeded.get(P.spread)!.slice(0, 12);
    for (const key of keys) {
      const uuid = key.slice(key.lastIndexOf(":") + 1);
      const r = await browseLookup(ctx, { uuid });
      expect(r.checkedPrefixes).toBe(3);
      expect(r.matches.map((m) => m.key)).toEqual([key]);
      const m = r.matches[0]!;
      expect(["done", "processing"]).toContain(m.state);
      expect(m.ttlMs).toBeGreaterThan(3_000_000);
      expect(m.bytes, `MEMORY USAGE of ${key}`).toBeGreaterThan(0);
    }
  });

  it("refuses a cursor naming a node that is not a current master (topology changed): start again", async () => {
    const page = await browseKeys(ctxFor(client!), { prefix: P.spread, count: 50 });
    expect(page.cursor).toBeTruthy();
    const stale = page.cursor!.replace(/^[^@|]+@/, "127.0.0.1:7999@");
    await expect(browseKeys(ctxFor(client!), { prefix: P.spread, cursor: stale, count: 50 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/127\.0\.0\.1:7999 is not a current master.*start again/),
    });
  });

  it('shows keys of the library\'s "release" marking (value claimed:<token>) as marked, not other', async () => {
    const prefix = `${service}:dedup:released`;
    const keys = Array.from({ length: 20 }, (_, i) => `${prefix}:01JD8X3QRELEASE${String(i).padStart(11, "0")}`);
    await Promise.all(keys.map((k) => client!.set(k, `${CLAIMED_PREFIX}tok${k.length}`, "PX", 3_600_000)));
    const page = await browseKeys(ctxFor(client!), { prefix, count: 50 });
    const all = [...page.keys];
    for (let cursor = page.cursor; cursor;) {
      const next = await browseKeys(ctxFor(client!), { prefix, cursor, count: 50 });
      all.push(...next.keys);
      cursor = next.cursor;
    }
    expect(all.map((k) => k.key).sort()).toEqual([...keys].sort());
    expect(new Set(all.map((k) => k.state))).toEqual(new Set(["marked"]));
  });

  it("never returns keys outside the configured globs, even when asked for their prefix", async () => {
    const { keys } = await browseAll(client!, P.outside, 200);
    expect(keys).toEqual([]);
  });
});
