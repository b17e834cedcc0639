/**
 * The Redis repository and the Deduplicator on a REAL 3-master Redis Cluster: the
 * library's parameterised suite (`redis-repository.suite.ts`) with a Cluster client factory, then
 * single-key commands and scripts on every master (no CROSSSLOT), batch claims split into one
 * pipeline per node with per-message outcomes, the lease protocol and release on failure, and the
 * Router's batch pre-claim across nodes.
 *
 * Needs `npm run stack:cluster` (127.0.0.1:7000-7002, or REDIS_CLUSTER_NODES): without it every
 * test fails with that instruction — never a silent skip.
 */
import { randomBytes } from "node:crypto";
import { Cluster, type Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InProgressError } from "../errors";
import { Deduplicator } from "../deduplicator/deduplicator";
import { newMessage, type Message } from "../message";
import { MemoryPubSub } from "../pubsub";
import { RECOMMENDED_IOREDIS_OPTIONS, RedisRepository, type DedupRedisClient } from "./redis-repository";
import { CLAIM_LUA, COMPARE_AND_DELETE_LUA, COMPARE_AND_SET_LUA } from "./redis-scripts";
import { redisRepositorySuite } from "./redis-repository.suite";
import { Router, type RouterErrorEvent } from "../router/router";
import { clusterClient, connectCluster, deletePrefix, errorStats } from "@/server/testing/redis-cluster";

// ---------------------------------------------------------------------------------------------
// Cluster access (connecting and the layout: server/testing/redis-cluster.ts)

function nodeName(n: Redis): string {
  return `${n.options.host}:${n.options.port}`;
}

/** The master serving each key, asked from the server (CLUSTER KEYSLOT + CLUSTER SLOTS), not computed by the library. */
async function ownersOf(c: Cluster, keys: readonly string[]): Promise<string[]> {
  const ranges = (await c.cluster("SLOTS")) as unknown as Array<[number, number, [string, number, ...unknown[]]]>;
  const any = c.nodes("master")[0]!;
  const p = any.pipeline();
  for (const k of keys) p.call("CLUSTER", "KEYSLOT", k);
  const slots = ((await p.exec()) ?? []).map(([e, v]) => {
    if (e) throw e;
    return Number(v);
  });
  return slots.map((s) => {
    const r = ranges.find(([lo, hi]) => s >= lo && s <= hi);
    if (!r) throw new Error(`slot ${s} is not served`);
    return `${r[2][0]}:${r[2][1]}`;
  });
}

function delta(after: Record<string, number>, before: Record<string, number>, name: string): number {
  return (after[name] ?? 0) - (before[name] ?? 0);
}

/** True for a claim command as the repository sends it (SET … NX GET, or the claim script). */
function isClaim(command: string, args: ReadonlyArray<string | number>): boolean {
  const c = command.toUpperCase();
  // A claim is SET … NX; the unconditional done mark (SET … PX … GET, no NX) is not one.
  return (
    (c === "SET" && args.includes("NX")) ||
    ((c === "EVALSHA" || c === "EVAL") && (args[0] === CLAIM_LUA.sha || args[0] === CLAIM_LUA.source))
  );
}

/**
 * The cluster behind the narrow client interface, counting round trips: pipelines that carry
 * claims (the batch pre-claim), other pipelines, and single calls by command.
 */
function counting(c: Cluster) {
  const stats = {
    claimPipelines: 0,
    claimsInPipelines: 0,
    otherPipelines: 0,
    singleClaims: 0,
    calls: new Map<string, number>(),
  };
  const client: DedupRedisClient = {
    isCluster: true,
    get slots() {
      return c.slots;
    },
    call(command, ...args) {
      stats.calls.set(command, (stats.calls.get(command) ?? 0) + 1);
      if (isClaim(command, args)) stats.singleClaims++;
      return c.call(command, ...args);
    },
    pipeline() {
      const p = c.pipeline();
      let claims = 0;
      let total = 0;
      return {
        call(command: string, ...args: Array<string | number>) {
          total++;
          if (isClaim(command, args)) claims++;
          return p.call(command, ...args);
        },
        exec() {
          if (claims > 0) {
            stats.claimPipelines++;
            stats.claimsInPipelines += claims;
            // One claim alone in a pipeline is a single claim sent the cluster-safe way.
            if (total === 1) stats.singleClaims++;
          } else stats.otherPipelines++;
          return p.exec();
        },
      };
    },
  };
  return { client, stats };
}

// ---------------------------------------------------------------------------------------------

/**
 * The client factories the suite runs with. The first is what the library recommends
 * (`RECOMMENDED_IOREDIS_OPTIONS`: auto-pipelining on, one retry per request); the second turns
 * auto-pipelining off, so a failure only in the first points at the interaction with it.
 */
const FACTORIES: ReadonlyArray<{ name: string; create: () => Promise<Cluster> }> = [
  {
    name: "RECOMMENDED_IOREDIS_OPTIONS",
    create: () =>
      connectCluster({
        enableAutoPipelining: RECOMMENDED_IOREDIS_OPTIONS.enableAutoPipelining,
        redisOptions: {
          maxRetriesPerRequest: RECOMMENDED_IOREDIS_OPTIONS.maxRetriesPerRequest,
          connectTimeout: RECOMMENDED_IOREDIS_OPTIONS.connectTimeout,
        },
      }),
  },
  {
    name: "auto-pipelining off",
    create: () =>
      connectCluster({ enableAutoPipelining: false, redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 } }),
  },
];

const CASES = FACTORIES.flatMap((f) =>
  (["set-nx-get", "lua"] as const).map((claimCommand) => ({ factory: f.name, create: f.create, claimCommand })),
);

/** Admin connection for the checks (no auto-pipelining): ownership, errorstats, cleanup. */
let admin: Cluster;
let prefix: string;
const masters = () => admin.nodes("master").map(nodeName);

/** Set when the cluster is down: every test then FAILS with the instruction (no silent skip). */
let clusterError: Error | null = null;

beforeAll(async () => {
  admin = await connectCluster().catch((e: Error) => {
    clusterError = e;
    return undefined as unknown as Cluster;
  });
});
afterAll(() => admin?.disconnect());
beforeEach(() => {
  if (clusterError) throw clusterError;
});

// The library's own Redis integration suite (lease protocol, release on failure, batch claims,
// failure modes…), run on the cluster with the recommended client options.
redisRepositorySuite("a 3-master Redis Cluster (library suite, RECOMMENDED_IOREDIS_OPTIONS)", () => {
  return clusterClient({
    enableAutoPipelining: RECOMMENDED_IOREDIS_OPTIONS.enableAutoPipelining,
    redisOptions: {
      maxRetriesPerRequest: RECOMMENDED_IOREDIS_OPTIONS.maxRetriesPerRequest,
      connectTimeout: RECOMMENDED_IOREDIS_OPTIONS.connectTimeout,
    },
  });
});

describe.each(CASES)(
  "RedisRepository on a 3-master Redis Cluster ($factory, claimCommand $claimCommand)",
  ({ create, claimCommand }) => {
    let cluster: Cluster;
    beforeAll(async () => {
      if (clusterError) return;
      cluster = await create();
      prefix = `t${randomBytes(4).toString("hex")}:dedup:h`;
    });
    afterAll(() => cluster?.disconnect());
    afterEach(async () => {
      if (!clusterError) await deletePrefix(admin, prefix);
    });

    /** `count` keys per master under the test prefix, found by asking the server where they live. */
    async function keysPerMaster(count: number, tag: string): Promise<Map<string, string[]>> {
      const cand = Array.from({ length: count * 12 }, (_, i) => `${prefix}:${tag}-${i}`);
      const owners = await ownersOf(admin, cand);
      const by = new Map<string, string[]>(masters().map((m) => [m, []]));
      cand.forEach((k, i) => {
        const list = by.get(owners[i]!)!;
        if (list.length < count) list.push(k);
      });
      for (const [m, list] of by)
        if (list.length < count) throw new Error(`only ${list.length} candidate keys on ${m}`);
      return by;
    }

    it("claims, compare-and-sets and compare-and-deletes keys on every master without CROSSSLOT or redirection", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const before = await errorStats(admin);
      const byMaster = await keysPerMaster(4, "single");
      expect(byMaster.size).toBe(3);
      for (const [master, keys] of byMaster) {
        for (const k of keys) {
          expect(await repo.claim(k, "processing:a", 60_000), `first claim of ${k} on ${master}`).toBeNull();
          expect(await repo.claim(k, "processing:b", 60_000), `second claim of ${k}`).toBe("processing:a");
          expect(await repo.compareAndSet(k, "processing:b", "done", 600_000)).toBe(false);
          expect(await cluster.get(k)).toBe("processing:a");
          expect(await repo.compareAndSet(k, "processing:a", "done", 600_000)).toBe(true);
          expect(await cluster.get(k)).toBe("done");
          const pttl = await cluster.pttl(k);
          expect(pttl).toBeGreaterThan(590_000);
          expect(pttl).toBeLessThanOrEqual(600_000);
          expect(await repo.compareAndDelete(k, "processing:a")).toBe(false);
          expect(await repo.compareAndDelete(k, "done")).toBe(true);
          expect(await cluster.exists(k)).toBe(0);
        }
      }
      // Every master loaded the compare-and-* scripts (EVALSHA → NOSCRIPT → EVAL once per node).
      for (const n of cluster.nodes("master")) {
        const loaded = (await n.call(
          "SCRIPT",
          "EXISTS",
          COMPARE_AND_SET_LUA.sha,
          COMPARE_AND_DELETE_LUA.sha,
        )) as number[];
        expect(loaded, `scripts on ${nodeName(n)}`).toEqual([1, 1]);
      }
      const after = await errorStats(admin);
      expect(delta(after, before, "CROSSSLOT")).toBe(0);
      expect(delta(after, before, "MOVED")).toBe(0);
    });

    it("concurrent single-key calls on keys of different masters all succeed (what concurrent partitions and batch done-marks do)", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const keys = [...(await keysPerMaster(5, "conc")).values()].flat();
      const claims = await Promise.allSettled(keys.map((k) => repo.claim(k, "processing:t", 60_000)));
      expect(claims.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual(
        keys.map(() => null),
      );
      const sets = await Promise.allSettled(keys.map((k) => repo.compareAndSet(k, "processing:t", "done", 600_000)));
      expect(sets.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual(
        keys.map(() => true),
      );
      const dels = await Promise.allSettled(keys.map((k) => repo.compareAndDelete(k, "done")));
      expect(dels.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual(
        keys.map(() => true),
      );
    });

    it("claims a batch spread over all masters in ONE pipeline per node, replies in request order", async () => {
      const { client, stats } = counting(cluster);
      const repo = new RedisRepository(client, { claimCommand });
      const keys = Array.from({ length: 600 }, (_, i) => `${prefix}:batch-${i}`);
      const owners = await ownersOf(admin, keys);
      expect(new Set(owners).size).toBe(3);
      // Every third key already holds a value: the batch must return that value in that key's slot.
      for (let i = 0; i < keys.length; i += 3) await cluster.set(keys[i]!, `done-${i}`, "PX", 600_000);
      // Warm the scripts on each master so the count below is the steady state (NOSCRIPT costs one extra trip once per node).
      for (const [, ks] of await keysPerMaster(1, "warm")) await repo.claim(ks[0]!, "w", 1000);
      Object.assign(stats, { claimPipelines: 0, claimsInPipelines: 0, otherPipelines: 0, singleClaims: 0 });
      stats.calls.clear();
      const before = await errorStats(admin);
      const replies = await repo.claimBatch(keys.map((key, i) => ({ key, value: `processing:${i}`, ttlMs: 60_000 })));
      const after = await errorStats(admin);

      expect(replies).toHaveLength(600);
      replies.forEach((r, i) => expect(r, keys[i]).toBe(i % 3 === 0 ? `done-${i}` : null));
      expect(stats.claimPipelines, "round trips of one batch = masters holding its keys").toBe(3);
      expect(stats.claimsInPipelines).toBe(600);
      expect(
        [...stats.calls.values()].reduce((a, b) => a + b, 0),
        "no per-key fallback",
      ).toBe(0);
      expect(delta(after, before, "MOVED") + delta(after, before, "ASK")).toBe(0);
      expect(delta(after, before, "CROSSSLOT")).toBe(0);
      const stored = await Promise.all(keys.map((k) => cluster.get(k)));
      stored.forEach((v, i) => expect(v).toBe(i % 3 === 0 ? `done-${i}` : `processing:${i}`));
    });

    it("keeps per-message outcomes when some claims of a multi-node batch fail", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const keys = Array.from({ length: 90 }, (_, i) => `${prefix}:mixed-${i}`);
      expect(new Set(await ownersOf(admin, keys)).size).toBe(3);
      // ttlMs 0 is refused by Redis ("invalid expire time"): those claims, on every node, fail alone.
      const replies = await repo.claimBatch(
        keys.map((key, i) => ({ key, value: "v", ttlMs: i % 5 === 0 ? 0 : 60_000 })),
      );
      replies.forEach((r, i) => {
        if (i % 5 === 0) expect(r, keys[i]).toBeInstanceOf(Error);
        else expect(r, keys[i]).toBeNull();
      });
      const stored = await Promise.all(keys.map((k) => cluster.get(k)));
      stored.forEach((v, i) => expect(v, keys[i]).toBe(i % 5 === 0 ? null : "v"));
    });

    it("lease protocol on every master: a run in progress is not done for a second replica; success marks done for the window", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const mk = () =>
        new Deduplicator({ repository: repo, prefix, leaseMs: 10_000, ttlMs: 600_000, timeoutMs: 2_000 });
      const a = mk();
      const b = mk();
      for (const [master, [key]] of await keysPerMaster(1, "lease")) {
        const uuid = key!.slice(prefix.length + 1);
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let ranA = 0;
        let ranB = 0;
        const runA = a.middleware(async () => {
          ranA++;
          await gate;
        })(newMessage(uuid, "x"));
        for (let i = 0; i < 100 && !(await cluster.get(key!))?.startsWith("processing:"); i++)
          await new Promise((r) => setTimeout(r, 10));
        expect(await cluster.get(key!), `lease on ${master}`).toMatch(/^processing:/);
        const handlerB = async () => void ranB++;
        await expect(b.middleware(handlerB)(newMessage(uuid, "x"))).rejects.toBeInstanceOf(InProgressError);
        release();
        await runA;
        expect(await cluster.get(key!)).toMatch(/^done#/);
        expect(await cluster.pttl(key!)).toBeGreaterThan(590_000);
        await b.middleware(handlerB)(newMessage(uuid, "x"));
        expect([ranA, ranB], `handler runs for the key on ${master}`).toEqual([1, 0]);
      }
    });

    it("release on failure on every master: a failed attempt frees its key, so the retry runs the handler", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const d = new Deduplicator({ repository: repo, prefix, leaseMs: 10_000, ttlMs: 600_000, timeoutMs: 2_000 });
      for (const [master, [key]] of await keysPerMaster(1, "fail")) {
        const uuid = key!.slice(prefix.length + 1);
        let runs = 0;
        const handler = async () => {
          runs++;
          if (runs === 1) throw new Error("boom");
        };
        await expect(d.middleware(handler)(newMessage(uuid, "x"))).rejects.toThrow("boom");
        expect(await cluster.exists(key!), `key released on ${master}`).toBe(0);
        await d.middleware(handler)(newMessage(uuid, "x"));
        expect(runs).toBe(2);
        expect(await cluster.get(key!)).toMatch(/^done#/);
      }
    });

    it("Router batch pre-claim across masters: repeats swallowed, new ones run once, one pipeline per node", async () => {
      const { client, stats } = counting(cluster);
      const repo = new RedisRepository(client, { claimCommand });
      const service = prefix.slice(0, prefix.indexOf(":"));
      const dedup = new Deduplicator({ repository: repo, service, leaseMs: 30_000, ttlMs: 600_000, timeoutMs: 2_000 });
      const ran: string[] = [];
      const errors: RouterErrorEvent[] = [];
      const router = new Router({ onError: (e) => errors.push(e) });
      const ps = new MemoryPubSub();
      router.addHandler({
        name: "h",
        topic: "t",
        subscriber: ps,
        handler: async (m) => void ran.push(m.uuid),
        middleware: [dedup.middleware],
      });
      const msgs: Message[] = Array.from({ length: 300 }, (_, i) => newMessage(`batch-${i}`, `p${i}`));
      const keys = msgs.map((m) => `${prefix}:${m.uuid}`);
      expect(new Set(await ownersOf(admin, keys)).size).toBe(3);
      for (let i = 0; i < keys.length; i += 3) await cluster.set(keys[i]!, "done", "PX", 600_000);
      for (const [, ks] of await keysPerMaster(1, "warm")) await repo.compareAndSet(ks[0]!, "x", "y", 1000);
      stats.claimPipelines = 0;
      stats.claimsInPipelines = 0;
      stats.singleClaims = 0;

      const outcomes = await router.sink("h").deliverBatch(msgs);
      expect(errors).toEqual([]);
      expect(outcomes).toEqual(msgs.map(() => "ack"));
      expect(ran).toEqual(msgs.filter((_, i) => i % 3 !== 0).map((m) => m.uuid));
      expect(stats.claimPipelines - stats.singleClaims, "the pre-claim costs one round trip per node").toBe(3);
      expect(stats.claimsInPipelines - stats.singleClaims).toBe(300);
      expect(stats.singleClaims, "no message had to claim again").toBe(0);
      const stored = await Promise.all(keys.map((k) => cluster.get(k)));
      expect(stored.every((v) => /^done(#|$)/.test(v ?? ""))).toBe(true);

      // The same batch redelivered (e.g. after a rebalance): everything is swallowed.
      ran.length = 0;
      const again = await router.sink("h").deliverBatch(msgs.map((m) => newMessage(m.uuid, m.payload)));
      expect(again.every((o) => o === "ack")).toBe(true);
      expect(ran).toEqual([]);
    });

    it("Router batch stopped by a nack releases the pre-claims of the messages that never ran, on every master", async () => {
      const repo = new RedisRepository(cluster, { claimCommand });
      const service = prefix.slice(0, prefix.indexOf(":"));
      const dedup = new Deduplicator({ repository: repo, service, leaseMs: 30_000, ttlMs: 600_000, timeoutMs: 2_000 });
      const router = new Router({ onError: () => undefined });
      const ps = new MemoryPubSub();
      const handler = async (m: Message) => {
        if (m.uuid === "nack-150") throw new Error("handler failed");
      };
      router.addHandler({ name: "h", topic: "t", subscriber: ps, handler, middleware: [dedup.middleware] });
      const msgs = Array.from({ length: 300 }, (_, i) => newMessage(`nack-${i}`, "x"));
      const keys = msgs.map((m) => `${prefix}:${m.uuid}`);
      const owners = await ownersOf(admin, keys);
      expect(new Set(owners.slice(151)).size).toBe(3);

      const outcomes = await router.sink("h").deliverBatch(msgs);
      expect(outcomes).toHaveLength(151);
      expect(outcomes[150]).toBe("nack");
      const stored = await Promise.all(keys.map((k) => cluster.get(k)));
      expect(stored.slice(0, 150).every((v) => v?.startsWith("done#"))).toBe(true);
      // The failed one released its own lease; the 149 that never ran were given back by `discard`.
      expect(stored.slice(150).filter((v) => v !== null)).toEqual([]);
    });
  },
);
